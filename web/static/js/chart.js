// A small line chart drawn as SVG: one series over the steps, its range on the left, the last value in the title.
// Hand-made so the page loads nothing from elsewhere; a few hundred points are drawn as one polyline.

const NS = "http://www.w3.org/2000/svg";
const MAX_POINTS = 600;

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const short = (value) => (Math.abs(value) >= 1000 || (Math.abs(value) < 0.001 && value !== 0)
  ? value.toExponential(2) : Number(value.toPrecision(3)).toString());

// Every n-th point when there are too many, always keeping the last.
function thin(points) {
  if (points.length <= MAX_POINTS) return points;
  const every = Math.ceil(points.length / MAX_POINTS);
  return points.filter((_, i) => i % every === 0 || i === points.length - 1);
}

export function lineChart(name, points, { width = 320, height = 130, marks = [] } = {}) {
  const last = points.length ? points[points.length - 1] : null;
  const caption = last ? `${name}  ${short(last.y)}  (step ${last.x})` : `${name}  (no values yet)`;
  return plotLines(name, caption, [{ points, colour: "#2457c5" }], { width, height, marks });
}

const MARK_COLOURS = { error: "#c62828", warning: "#e08a00", info: "#5b6475" };

// Several series on one pair of axes: lines of {points: [{x, y}], colour, id?}; the shared range on the left.
// `marks`: step ranges to shade, each {from, to, code, severity} (run-health findings), labelled with the code.
export function plotLines(name, captionText, lines, { width = 320, height = 130, label = captionText, marks = [] } = {}) {
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.dataset.metric = name;
  const caption = document.createElement("figcaption");
  caption.textContent = captionText;
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": label });
  const pad = { left: 46, right: 8, top: 8, bottom: 18 };
  plot.append(svg("rect", { x: pad.left, y: pad.top, width: width - pad.left - pad.right,
    height: height - pad.top - pad.bottom, fill: "#fbfcfe", stroke: "#d9dde5" }));
  const all = lines.flatMap((l) => l.points);
  if (all.length) {
    const xs = all.map((p) => p.x), ys = all.map((p) => p.y);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    const px = (x) => pad.left + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (width - pad.left - pad.right);
    const py = (y) => height - pad.bottom - ((y - y0) / (y1 - y0)) * (height - pad.top - pad.bottom);
    let labelEnd = -Infinity; // a code is written where its first stretch begins and where it has room: stretches
    const labelled = new Set(); // a few steps apart would pile their labels into one unreadable smear
    for (const mark of marks) {
      const left = px(Math.max(mark.from, x0)), right = px(Math.min(mark.to, x1));
      const colour = MARK_COLOURS[mark.severity] || MARK_COLOURS.info;
      const band = svg("rect", { x: Math.min(left, right) - 2, y: pad.top, width: Math.abs(right - left) + 4,
        height: height - pad.top - pad.bottom, fill: colour, "fill-opacity": 0.14, stroke: colour, "stroke-opacity": 0.5,
        class: "health-mark", "data-code": mark.code, "data-from": mark.from, "data-to": mark.to });
      band.append(svg("title", {}, `${mark.code} at step${mark.from === mark.to ? ` ${mark.from}` : `s ${mark.from}-${mark.to}`}`));
      plot.append(band);
      const code = mark.code.replace("GRPO-", "");
      const at = Math.min(left, right) + 2;
      if (labelled.has(mark.code) || at < labelEnd) continue;
      labelled.add(mark.code);
      labelEnd = at + code.length * 6 + 4; // 9px digits and capitals are under 6px wide
      plot.append(svg("text", { x: at, y: pad.top + 10, "font-size": 9, fill: colour, class: "health-mark-label" },
                      code));
    }
    for (const line of lines.filter((l) => l.points.length)) {
      const drawn = thin(line.points).map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(" ");
      plot.append(svg("polyline", { points: drawn, fill: "none", stroke: line.colour, "stroke-width": 1.6,
                                    ...(line.id ? { "data-run-id": line.id } : {}) }));
    }
    plot.append(svg("text", { x: pad.left - 4, y: pad.top + 9, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, short(y1)));
    plot.append(svg("text", { x: pad.left - 4, y: height - pad.bottom, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, short(y0)));
    plot.append(svg("text", { x: pad.left, y: height - 4, "font-size": 10, fill: "#5b6475" }, `step ${x0}`));
    plot.append(svg("text", { x: width - pad.right, y: height - 4, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, `${x1}`));
  }
  figure.append(caption, plot);
  return figure;
}

// The points of one metric: records that have a finite value for it.
export const series = (records, name) => records
  .filter((r) => typeof r[name] === "number" && Number.isFinite(r[name]) && typeof r.step === "number")
  .map((r) => ({ x: r.step, y: r[name] }));
