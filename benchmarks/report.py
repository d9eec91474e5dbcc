"""Render the results document (benchmarks/results/latest.json) as markdown."""

from __future__ import annotations

from grpo_schema.engine.words import plural


def fmt(value: float, digits: int = 1) -> str:
    return "n/a" if value != value else f"{value:,.{digits}f}"


def header(results: dict) -> list[str]:
    m, v = results["machine"], results["machine"]["versions"]
    shown = ", ".join(
        f"{k} {v[k]}"
        for k in ("python", "torch", "transformers", "trl", "pydantic", "pydantic-core", "fastapi", "uvicorn")
    )
    return [
        "# grpo-config benchmarks",
        "",
        f"Command: `{results['command']}` ({'quick' if results['quick'] else 'full'} run, {results['date']})",
        "",
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM, {m['os']}",
        f"- Versions: {shown}; HTTP parser {'httptools ' + v['httptools'] if v['httptools'] != 'not installed' else 'h11 ' + v['h11']}"
        f", event loop {'uvloop ' + v['uvloop'] if v['uvloop'] != 'not installed' else 'asyncio'}",
        f"- grpo-config commit: {m['commit']}",
        f"- Load average (1, 5, 15 min) at start: {results['load_start']}; per section below",
        "",
    ]


def cold(section: dict) -> list[str]:
    floor = section["floor"]
    lines = [
        "## 1. Cold whole-process validation",
        "",
        f"Median of {floor['wall_ms']['n']} fresh processes each (after warm-up runs). Floor: "
        f'`python -c "import pydantic, yaml"` = {fmt(floor["wall_ms"]["median"])} ms wall, '
        f"{fmt(floor['cpu_ms']['median'])} ms CPU, {fmt(floor['peak_rss_mb']['median'])} MB peak RSS.",
        "",
        "| file | `grpo validate` wall / CPU ms | TRL parser wall / CPU ms | speed-up vs TRL (wall / CPU) "
        "| ours / floor (wall / CPU) | peak RSS ours / TRL MB |",
        "|---|---|---|---|---|---|",
    ]
    for r in section["files"]:
        o, t = r["ours"], r["trl"]
        lines.append(
            f"| {r['file']}{' (--profile ' + ','.join(r['profiles']) + ')' if r['profiles'] else ''} "
            f"| {fmt(o['wall_ms']['median'])} / {fmt(o['cpu_ms']['median'])} "
            f"| {fmt(t['wall_ms']['median'])} / {fmt(t['cpu_ms']['median'])} "
            f"| {fmt(r['speedup_vs_trl'])}x / {fmt(r['cpu_speedup_vs_trl'])}x "
            f"| {fmt(r['ours_over_floor'], 2)}x / {fmt(r['cpu_ours_over_floor'], 2)}x "
            f"| {fmt(o['peak_rss_mb']['median'])} / {fmt(t['peak_rss_mb']['median'])} |"
        )
    return lines + [""]


def inproc(section: dict) -> list[str]:
    lines = [
        "## 2. In-process validation (YAML text to diagnostics, every rule on)",
        "",
        "| file | grpo-config ms/file | TRL parser ms/file | files/s ours / TRL | speed-up |",
        "|---|---|---|---|---|",
    ]
    for r in section["files"]:
        lines.append(
            f"| {r['file']} | {fmt(r['ours_ms']['median'], 3)} | {fmt(r['trl_ms']['median'], 3)} "
            f"| {fmt(r['ours_per_s'], 0)} / {fmt(r['trl_per_s'], 0)} | {fmt(r['speedup_vs_trl'])}x |"
        )
    return lines + [""]


def service(section: dict) -> list[str]:
    lines = [
        f"## 3. Service: POST /api/v1/validate on loopback (body: {section['body_file']})",
        "",
        "| connections | requests | req/s | p50 ms | p90 ms | p99 ms | errors | server CPU ms/request |",
        "|---|---|---|---|---|---|---|---|",
    ]
    labelled = [(str(r["connections"]), r) for r in section["rows"]]
    for key, label in (
        ("checked_anew", "every body new: checked anew, never a kept answer"),
        ("corpus_mix", "every example recipe in turn"),
        ("healthz_floor", "GET /healthz, floor"),
    ):
        if key in section:
            labelled.append((f"{section[key]['connections']} ({label})", section[key]))
    for label, r in labelled:
        lines.append(
            f"| {label} | {r['requests']} | {fmt(r['requests_per_s'], 0)} | {fmt(r['p50_ms'], 2)} "
            f"| {fmt(r['p90_ms'], 2)} | {fmt(r['p99_ms'], 2)} | {r['errors']} "
            f"| {fmt(r['server_cpu_ms_per_request'], 2)} |"
        )
    if "checked_anew" in section:
        lines += [
            "",
            "The service keeps the answer of a body sent again (web/api/memo.py): the rows for one recipe "
            "are answered from it after their first request; the 'checked anew' row is the check itself.",
        ]
    return lines + [""]


def runtime(section: dict) -> list[str]:
    title = f"## 4. Runtime on {section['device']}: grpo_runtime vs TRL GRPOTrainer"
    if "skipped" in section:
        return [title, "", f"Skipped: {section['skipped']}.", ""]
    o, t = section["ours"], section["trl"]
    s = section["settings"]
    return [
        title,
        "",
        f"Tiny local model (grpo_runtime.model.tiny), {s['per_device_train_batch_size']} completions per step "
        f"({s['num_generations']} per prompt), {s['max_completion_length']} tokens each, loss {s['loss_type']}, "
        f"beta {s['beta']}, seed {s['seed']}, {plural(section['threads'], 'torch thread')}; median over "
        f"{o['steady_steps']} / {t['steady_steps']} steady-state steps of {o['runs']} runs each.",
        "",
        "| | grpo_runtime | TRL 1.16 | ratio |",
        "|---|---|---|---|",
        f"| s / optimizer step | {fmt(o['s_per_step'], 3)} | {fmt(t['s_per_step'], 3)} | {fmt(section['speedup_vs_trl'], 2)}x |",
        f"| completions / s | {fmt(o['completions_per_s'])} | {fmt(t['completions_per_s'])} | |",
        f"| completion tokens / s | {fmt(o['tokens_per_s'], 0)} | {fmt(t['tokens_per_s'], 0)} | |",
        f"| CPU s / optimizer step | {fmt(o['cpu_s_per_step'], 3)} | {fmt(t['cpu_s_per_step'], 3)} "
        f"| {fmt(section['cpu_speedup_vs_trl'], 2)}x |",
        f"| whole process s (imports, load, {section['steps_per_run']} steps) | {fmt(o['process_wall_s'])} "
        f"| {fmt(t['process_wall_s'])} | |",
        "",
    ]


def imports(section: dict) -> list[str]:
    lines = [
        "## 5. Import time (`-X importtime`, median of 5 runs)",
        "",
        "| process | total import ms | modules | top packages (self ms) | heavy modules loaded |",
        "|---|---|---|---|---|",
    ]
    for name, r in section.items():
        top = ", ".join(f"{p['package']} {fmt(p['ms'])}" for p in r["top_packages"][:5])
        lines.append(
            f"| `{name}` | {fmt(r['total_ms'])} | {r['modules']} | {top} | {', '.join(r['offenders']) or 'none'} |"
        )
    slowest = section["grpo validate"]["top_self"][:8]
    lines += [
        "",
        "Slowest modules of `grpo validate` (self ms): " + ", ".join(f"{m['module']} {fmt(m['ms'])}" for m in slowest),
        "",
    ]
    return lines


def targets(results: dict) -> list[str]:
    lines = ["## Targets", "", "| section | target | measured | met |", "|---|---|---|---|"]
    for name, section in results["sections"].items():
        for target, got in section.get("targets", {}).items():
            value = got["value"] if isinstance(got["value"], str) else f"{got['value']:.2f}"
            met = "**not a result** (machine busy)" if got.get("busy") else "yes" if got["met"] else "**no**"
            lines.append(f"| {name} | {target} | {value} | {met} |")
    return lines + [""]


def lsp(section: dict) -> list[str]:
    from benchmarks.lsp import render as render_lsp

    return render_lsp(section)


def runtime_memory(section: dict) -> list[str]:
    s = section["settings"]
    lines = [
        "## 7. Runtime memory: peak RSS of one optimizer step, grpo_runtime vs TRL GRPOTrainer (CPU)",
        "",
        f"Tiny local model (grpo_runtime.model.tiny) widened to a {section['vocab']:,}-token vocabulary, fp32, "
        f"{s['per_device_train_batch_size']} completions per step ({s['num_generations']} per prompt, one "
        f"micro-batch), every completion exactly N tokens (min_new_tokens = N), loss {s['loss_type']}, beta "
        f"{s['beta']}, one torch thread. Peak RSS of each process (imports, load, generation, scoring, "
        "backward, optimizer step); baseline = RSS after the imports.",
        "",
        "| completion tokens | grpo_runtime GiB | TRL 1.16 GiB | ratio | baselines GiB | load average (ours, TRL) |",
        "|---|---|---|---|---|---|",
    ]
    for r in section["rows"]:
        o, t = r["ours"], r["trl"]
        lines.append(
            f"| {r['length']} | {fmt(o['peak_rss_gib'], 2)} | {fmt(t['peak_rss_gib'], 2)} "
            f"| {fmt(r['ratio'], 2)} | {fmt(o['baseline_rss_gib'], 2)} / {fmt(t['baseline_rss_gib'], 2)} "
            f"| {o['load_before'][0]}, {t['load_before'][0]} |"
        )
    return lines + [""]


def smoke(section: dict) -> list[str]:
    from benchmarks.smoke import render as render_smoke

    return render_smoke(section)


RENDERERS = {
    "validate": cold,
    "inprocess": inproc,
    "service": service,
    "runtime": runtime,
    "runtime_cuda": runtime,
    "imports": imports,
    "lsp": lsp,
    "runtime_memory": runtime_memory,
    "smoke": smoke,
}


def render(results: dict) -> str:
    lines = header(results) + targets(results)
    for name, section in results["sections"].items():
        lines += RENDERERS[name](section)
        load = results["load"].get(name)
        if load:
            busy = (
                f" **Busy machine** (1-minute load above {load['busy_threshold']:g}): not a result."
                if load.get("busy")
                else ""
            )
            lines += [f"_Load average during this section: {load['before']} before, {load['after']} after._{busy}", ""]
    return "\n".join(lines)
