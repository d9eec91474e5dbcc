"""Draw the layers of grpo_schema and grpo_runtime from the code: docs/architecture.svg and the import table in
docs/architecture.md (between its `architecture:begin` / `architecture:end` markers).

    python scripts/architecture.py           # rewrite both
    python scripts/architecture.py --check   # exit 1 when either is stale (tests/test_architecture.py runs it)

The layers are the `layers` contracts of pyproject.toml's [tool.importlinter] section (the ones `lint-imports`
enforces); the arrows are the imports grimp finds between them, so the picture cannot drift from the code. Nothing
here needs Graphviz: the drawing is a fixed grid, one row per layer, written as plain SVG.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import tomllib

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
SVG = REPO / "docs" / "architecture.svg"
BEGIN, END = "<!-- architecture:begin (scripts/architecture.py writes this table) -->", "<!-- architecture:end -->"


@dataclass(frozen=True)
class Panel:
    container: str
    name: str
    rows: list[list[str]]  # top layer first; each row's sibling layers, as module names below the container


def panels() -> list[Panel]:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    found = []
    for contract in settings["contracts"]:
        if contract["type"] != "layers":
            continue
        rows = [[part.strip() for part in layer.replace(":", "|").split("|")] for layer in contract["layers"]]
        if "containers" in contract:
            container = contract["containers"][0]
        else:  # layers named in full: the package they share is the container
            container = rows[0][0].split(".")[0]
            rows = [[node.removeprefix(container + ".") for node in row] for row in rows]
        found.append(Panel(container, contract["id"], rows))
    return found


def import_graph():
    import grimp

    return grimp.build_graph("grpo_schema", "grpo_runtime", "grpo_web", exclude_type_checking_imports=True)


def node_edges(panel: Panel, graph) -> dict[str, set[str]]:
    """For each layer module, the other layer modules of the panel it imports (directly, from any submodule)."""
    nodes = [node for row in panel.rows for node in row]
    owner = {}
    for node in nodes:
        full = f"{panel.container}.{node}"
        for module in graph.find_descendants(full) | {full} if full in graph.modules else set():
            owner[module] = node
    edges: dict[str, set[str]] = {node: set() for node in nodes}
    for module, node in owner.items():
        for imported in graph.find_modules_directly_imported_by(module):
            target = owner.get(imported)
            if target is not None and target != node:
                edges[node].add(target)
    return edges


def table(panel: Panel, edges: dict[str, set[str]], graph) -> list[str]:
    lines = [
        f"**{panel.container}** (`{panel.name}`), top layer first:",
        "",
        "| layer | modules | imports |",
        "|---|---|---|",
    ]
    for row in panel.rows:
        for node in row:
            full = f"{panel.container}.{node}"
            count = len(graph.find_descendants(full)) + 1 if full in graph.modules else 0
            targets = ", ".join(f"`{t}`" for t in sorted(edges[node])) or "-"
            lines.append(f"| `{node}` | {count} | {targets} |")
    return lines + [""]


# --- drawing ------------------------------------------------------------------------------------------------------
CHAR, PAD, BOX_H, ROW_H, GAP, PANEL_GAP, TOP, MARGIN = 7.2, 14, 26, 64, 16, 48, 40, 90


def layout(panel: Panel) -> tuple[dict[str, tuple[float, float, float]], float, float]:
    """Each node's (x, y, width) in a panel drawn at the origin, and the panel's width and height."""
    widths = {node: len(node) * CHAR + 2 * PAD for row in panel.rows for node in row}
    row_widths = [sum(widths[n] for n in row) + GAP * (len(row) - 1) for row in panel.rows]
    width = max(row_widths + [len(panel.container) * CHAR * 1.3]) + 2 * MARGIN
    places = {}
    for index, row in enumerate(panel.rows):
        x = (width - row_widths[index]) / 2
        for node in row:
            places[node] = (x, TOP + index * ROW_H, widths[node])
            x += widths[node] + GAP
    return places, width, TOP + len(panel.rows) * ROW_H


def edge_paths(panel: Panel, edges: dict[str, set[str]], places) -> list[str]:
    """One arrow per import between layers: ends spread along the boxes' edges, and an arrow that skips layers
    bends out to the side (alternating by the layers it skips) so it does not run through the boxes between."""
    row_of = {node: index for index, row in enumerate(panel.rows) for node in row}
    arrows = sorted((row_of[s], s, row_of[t], t) for s in edges for t in edges[s])
    outgoing = {s: sorted((r, t) for _, src, r, t in arrows if src == s) for s in edges}
    incoming = {t: sorted((r, s) for r, s, _, tgt in arrows if tgt == t) for t in edges}
    paths = []
    for source_row, source, target_row, target in arrows:
        sx, sy, sw = places[source]
        tx, ty, tw = places[target]
        out_index = outgoing[source].index((target_row, target))
        in_index = incoming[target].index((source_row, source))
        x1 = sx + sw * (out_index + 1) / (len(outgoing[source]) + 1)
        x2 = tx + tw * (in_index + 1) / (len(incoming[target]) + 1)
        y1, y2 = sy + BOX_H, ty
        skipped = target_row - source_row - 1
        if skipped <= 0:
            shape = f"M {x1:.1f} {y1:.1f} L {x2:.1f} {y2:.1f}"
        else:
            side = 1 if (source_row + target_row) % 2 else -1
            bend = side * (sw / 2 + 10 + 9 * skipped)
            shape = (
                f"M {x1:.1f} {y1:.1f} C {x1 + bend:.1f} {y1 + ROW_H / 2:.1f}, {x2 + bend:.1f} "
                f"{y2 - ROW_H / 2:.1f}, {x2:.1f} {y2:.1f}"
            )
        paths.append(f'<path d="{shape}" class="edge" marker-end="url(#arrow)"/>')
    return paths


def svg(drawn: list[tuple[Panel, dict[str, set[str]]]]) -> str:
    parts, offset, height = [], 20.0, 0.0
    for panel, edges in drawn:
        places, width, panel_height = layout(panel)
        height = max(height, panel_height)
        parts.append(f'<g transform="translate({offset:.1f},0)">')
        parts.append(f'<text x="{width / 2:.1f}" y="24" class="title">{escape(panel.container)}</text>')
        parts += edge_paths(panel, edges, places)
        for node, (x, y, w) in sorted(places.items()):
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BOX_H}" rx="5" class="box"/>')
            parts.append(f'<text x="{x + w / 2:.1f}" y="{y + 17:.1f}" class="label">{escape(node)}</text>')
        parts.append("</g>")
        offset += width + PANEL_GAP
    total_width, total_height = offset - PANEL_GAP + 20, height + 10
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" height="{total_height:.0f}" '
        f'viewBox="0 0 {total_width:.0f} {total_height:.0f}" font-family="DejaVu Sans Mono, monospace">\n'
        "<style>.box{fill:#eef3fb;stroke:#4a6fa5;stroke-width:1.2}.label{font-size:12px;text-anchor:middle;"
        "fill:#1d2b40}.title{font-size:15px;font-weight:bold;text-anchor:middle;fill:#1d2b40}"
        ".edge{fill:none;stroke:#8899aa;stroke-width:0.9;opacity:0.75}</style>\n"
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8899aa"/></marker></defs>\n'
        f'<rect width="100%" height="100%" fill="white"/>\n'
    )
    return head + "\n".join(parts) + "\n</svg>\n"


def render() -> tuple[str, str]:
    """(the SVG, docs/architecture.md with its table regenerated)."""
    graph = import_graph()
    drawn = [(panel, node_edges(panel, graph)) for panel in panels()]
    lines = [BEGIN, ""]
    for panel, edges in drawn:
        lines += table(panel, edges, graph)
    lines.append(END)
    doc = DOC.read_text(encoding="utf-8")
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    return svg(drawn), doc[:start] + "\n".join(lines) + doc[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.{md,svg} are stale")
    args = parser.parse_args(argv)
    picture, doc = render()
    if args.check:
        stale = [p.name for p, text in ((SVG, picture), (DOC, doc)) if not p.exists() or p.read_text() != text]
        if stale:
            print(f"stale: {', '.join(stale)}; run python scripts/architecture.py", file=sys.stderr)
            return 1
        return 0
    SVG.write_text(picture, encoding="utf-8")
    DOC.write_text(doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
