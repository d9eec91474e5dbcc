// Starts `grpo lsp` (the grpo-config language server) for the YAML files matched by `grpo.files`.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function settings() {
  const config = vscode.workspace.getConfiguration("grpo");
  return {
    grpo: {
      worldSize: config.get("worldSize"),
      profiles: config.get("profiles"),
      hardware: config.get("hardware"),
      allowEnv: config.get("allowEnv"),
      trlVersion: config.get("trlVersion"),
      debounceMs: config.get("debounceMs"),
      filePatterns: config.get("files"), // the documents the client sends are the ones the server expects configs in
    },
  };
}

function activate(context) {
  const config = vscode.workspace.getConfiguration("grpo");
  const [command, ...args] = config.get("command");
  const serverOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: config.get("files").map((pattern) => ({ scheme: "file", language: "yaml", pattern })),
    initializationOptions: settings(),
    synchronize: { configurationSection: "grpo" },
  };
  // synchronize.configurationSection: the client sends {settings: {grpo: {...}}} whenever the settings change.
  client = new LanguageClient("grpo", "GRPO config", serverOptions, clientOptions);
  // The files the client sends and the command that starts the server are fixed when the extension starts: say so
  // when they change, rather than leave a new pattern silently unchecked until the next start.
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (event) => {
    if (!event.affectsConfiguration("grpo.files") && !event.affectsConfiguration("grpo.command")) return;
    const reload = "Reload Window";
    const answer = await vscode.window.showInformationMessage(
      "grpo.files and grpo.command apply once the window is reloaded.", reload);
    if (answer === reload) vscode.commands.executeCommand("workbench.action.reloadWindow");
  }));
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
