//! The bench plot as one SVG document: throughput and p50/p99 latency
//! against concurrency, the knee marked in both, and below them the latency
//! histogram of every step.
//!
//! The steps sit at even intervals on the x axis (a sweep doubles its
//! concurrency, so that is a log scale for the usual sweeps and still
//! readable for any other). Elements carry ids and classes (`throughput`,
//! `latency`, `knee`, `histogram`) so that tests and style sheets find them.

use std::fmt::Write;

use super::{BenchReport, escape};

const WIDTH: f64 = 960.0;
const CHART_HEIGHT: f64 = 260.0;
const MARGIN_LEFT: f64 = 70.0;
const MARGIN_RIGHT: f64 = 30.0;
const HIST_HEIGHT: f64 = 120.0;
const HIST_PER_ROW: usize = 4;

/// One chart's frame: where its plot area is and how values map into it.
struct Frame {
    top: f64,
    height: f64,
    max: f64,
    steps: usize,
}

impl Frame {
    fn x(&self, index: usize) -> f64 {
        let span = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
        if self.steps <= 1 {
            return MARGIN_LEFT + span / 2.0;
        }
        MARGIN_LEFT + span * index as f64 / (self.steps - 1) as f64
    }

    fn y(&self, value: f64) -> f64 {
        let ratio = if self.max > 0.0 { value / self.max } else { 0.0 };
        self.top + self.height * (1.0 - ratio.clamp(0.0, 1.0))
    }

    fn bottom(&self) -> f64 {
        self.top + self.height
    }
}

/// A round number at or above `value`, for an axis's top (1, 2 or 5 × 10ⁿ).
fn nice_ceiling(value: f64) -> f64 {
    if !(value.is_finite() && value > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|v| *v >= value)
        .unwrap_or(10.0 * magnitude)
}

/// A number for an axis label: few digits, no trailing zeros.
fn label(value: f64) -> String {
    if value >= 100.0 || value == value.trunc() {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// The plot of a bench report, as a standalone SVG document.
pub fn svg(report: &BenchReport) -> String {
    let steps = &report.steps;
    let rows = steps.len().div_ceil(HIST_PER_ROW);
    let height = 60.0 + 2.0 * (CHART_HEIGHT + 60.0) + rows as f64 * (HIST_HEIGHT + 50.0) + 20.0;
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="system-ui, sans-serif" font-size="12">"#
    );
    let _ = write!(
        out,
        r##"<title>toolport bench: {tool} on {server}</title><rect width="100%" height="100%" fill="#ffffff"/><text x="{MARGIN_LEFT}" y="30" font-size="16" font-weight="bold">toolport bench: {tool}</text><text x="{MARGIN_LEFT}" y="48" fill="#555">{server}</text>"##,
        tool = escape(&report.tool),
        server = escape(&report.server),
    );
    let knee_index = report
        .knee_concurrency
        .and_then(|k| steps.iter().position(|s| s.concurrency == k));

    let throughput = Frame {
        top: 80.0,
        height: CHART_HEIGHT,
        max: nice_ceiling(steps.iter().map(|s| s.calls_per_second).fold(0.0, f64::max)),
        steps: steps.len(),
    };
    out.push_str(r#"<g id="throughput" class="chart">"#);
    axes(&mut out, &throughput, "calls per second", report);
    series(
        &mut out,
        &throughput,
        "throughput-line",
        "#1f6feb",
        steps.iter().map(|s| s.calls_per_second),
    );
    out.push_str("</g>");

    let latency = Frame {
        top: throughput.bottom() + 60.0,
        height: CHART_HEIGHT,
        max: nice_ceiling(steps.iter().map(|s| s.latency_ms.p99).fold(0.0, f64::max)),
        steps: steps.len(),
    };
    out.push_str(r#"<g id="latency" class="chart">"#);
    axes(&mut out, &latency, "latency, ms", report);
    series(
        &mut out,
        &latency,
        "p50-line",
        "#2da44e",
        steps.iter().map(|s| s.latency_ms.p50),
    );
    series(
        &mut out,
        &latency,
        "p99-line",
        "#cf222e",
        steps.iter().map(|s| s.latency_ms.p99),
    );
    let _ = write!(
        out,
        r##"<g class="legend"><rect x="{x}" y="{y}" width="10" height="10" fill="#2da44e"/><text x="{tx}" y="{ty}">p50</text><rect x="{x2}" y="{y}" width="10" height="10" fill="#cf222e"/><text x="{tx2}" y="{ty}">p99</text></g>"##,
        x = WIDTH - 150.0,
        y = latency.top - 18.0,
        tx = WIDTH - 136.0,
        ty = latency.top - 9.0,
        x2 = WIDTH - 90.0,
        tx2 = WIDTH - 76.0,
    );
    out.push_str("</g>");

    match knee_index {
        Some(index) => {
            let x = throughput.x(index);
            let concurrency = steps[index].concurrency;
            let _ = write!(
                out,
                r##"<g id="knee" class="knee" data-concurrency="{concurrency}"><line x1="{x}" y1="{t}" x2="{x}" y2="{b}" stroke="#bf8700" stroke-width="2" stroke-dasharray="6 4"/><text x="{tx}" y="{ty}" fill="#7d4e00" font-weight="bold">knee: concurrency {concurrency}</text></g>"##,
                t = throughput.top,
                b = latency.bottom(),
                tx = x + 6.0,
                ty = throughput.top + 14.0,
            );
        }
        None => {
            let _ = write!(
                out,
                r##"<g id="knee" class="knee" data-concurrency=""><text x="{x}" y="{y}" fill="#555">knee: not reached, throughput still grows at the highest concurrency</text></g>"##,
                x = MARGIN_LEFT + 10.0,
                y = throughput.top + 14.0,
            );
        }
    }

    let top = latency.bottom() + 60.0;
    histograms(&mut out, report, top);
    out.push_str("</svg>\n");
    out
}

/// The frame, the y axis with its top and middle values, and the x axis
/// with each step's concurrency.
fn axes(out: &mut String, frame: &Frame, title: &str, report: &BenchReport) {
    let (left, right) = (MARGIN_LEFT, WIDTH - MARGIN_RIGHT);
    let _ = write!(
        out,
        r##"<text x="{left}" y="{y}" font-weight="bold">{title}</text><line x1="{left}" y1="{b}" x2="{right}" y2="{b}" stroke="#333"/><line x1="{left}" y1="{t}" x2="{left}" y2="{b}" stroke="#333"/>"##,
        y = frame.top - 8.0,
        t = frame.top,
        b = frame.bottom(),
    );
    for fraction in [0.5, 1.0] {
        let value = frame.max * fraction;
        let y = frame.y(value);
        let _ = write!(
            out,
            r##"<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="#ddd"/><text x="{lx}" y="{ty}" text-anchor="end">{v}</text>"##,
            lx = left - 6.0,
            ty = y + 4.0,
            v = label(value),
        );
    }
    let _ = write!(
        out,
        r#"<text x="{lx}" y="{ty}" text-anchor="end">0</text>"#,
        lx = left - 6.0,
        ty = frame.bottom() + 4.0
    );
    for (i, step) in report.steps.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{x}" y="{y}" text-anchor="middle">{c}</text>"#,
            x = frame.x(i),
            y = frame.bottom() + 16.0,
            c = step.concurrency,
        );
    }
    let _ = write!(
        out,
        r##"<text x="{x}" y="{y}" text-anchor="middle" fill="#555">concurrency</text>"##,
        x = (left + right) / 2.0,
        y = frame.bottom() + 32.0,
    );
}

/// A line through the steps' values, with a dot at each.
fn series(out: &mut String, frame: &Frame, class: &str, color: &str, values: impl Iterator<Item = f64>) {
    let points: Vec<(f64, f64)> = values.enumerate().map(|(i, v)| (frame.x(i), frame.y(v))).collect();
    let path: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = write!(
        out,
        r#"<polyline class="{class}" points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
        path.join(" ")
    );
    for (x, y) in points {
        let _ = write!(
            out,
            r#"<circle class="{class}-point" cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
        );
    }
}

/// One small histogram per step: a bar per doubling of latency.
fn histograms(out: &mut String, report: &BenchReport, top: f64) {
    let _ = write!(
        out,
        r#"<text x="{MARGIN_LEFT}" y="{y}" font-weight="bold">latency histogram per step (calls per doubling of latency)</text>"#,
        y = top - 10.0
    );
    let cell = (WIDTH - MARGIN_LEFT - MARGIN_RIGHT) / HIST_PER_ROW as f64;
    for (i, step) in report.steps.iter().enumerate() {
        let (row, column) = (i / HIST_PER_ROW, i % HIST_PER_ROW);
        let x0 = MARGIN_LEFT + column as f64 * cell;
        let y0 = top + 10.0 + row as f64 * (HIST_HEIGHT + 50.0);
        let knee = report.knee_concurrency == Some(step.concurrency);
        let _ = write!(
            out,
            r##"<g class="histogram{extra}" data-concurrency="{c}"><text x="{x0}" y="{ty}">c={c}{mark}</text><line x1="{x0}" y1="{b}" x2="{x1}" y2="{b}" stroke="#333"/>"##,
            extra = if knee { " at-knee" } else { "" },
            c = step.concurrency,
            mark = if knee { " (knee)" } else { "" },
            ty = y0 + 4.0,
            b = y0 + 14.0 + HIST_HEIGHT,
            x1 = x0 + cell - 20.0,
        );
        let most = step.histogram.iter().map(|b| b.count).max().unwrap_or(0).max(1);
        let bars = step.histogram.len().max(1);
        let bar_width = ((cell - 20.0) / bars as f64).max(1.0);
        for (j, bucket) in step.histogram.iter().enumerate() {
            let h = HIST_HEIGHT * bucket.count as f64 / most as f64;
            let _ = write!(
                out,
                r##"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="#8250df"><title>≤ {u} ms: {n} calls</title></rect>"##,
                x = x0 + j as f64 * bar_width,
                y = y0 + 14.0 + HIST_HEIGHT - h,
                w = (bar_width - 1.0).max(0.5),
                u = label(bucket.upper_ms),
                n = bucket.count,
            );
        }
        if let (Some(first), Some(last)) = (step.histogram.first(), step.histogram.last()) {
            let _ = write!(
                out,
                r##"<text x="{x0}" y="{y}" fill="#555">{lo} ms</text><text x="{x1}" y="{y}" text-anchor="end" fill="#555">{hi} ms</text>"##,
                y = y0 + 28.0 + HIST_HEIGHT,
                x1 = x0 + cell - 20.0,
                lo = label(first.upper_ms),
                hi = label(last.upper_ms),
            );
        }
        out.push_str("</g>");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;

    fn parse(text: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("not well-formed XML: {e}\n{text}"))
    }

    #[test]
    fn the_plot_is_svg_with_the_knee_on_the_knee_step() {
        let report = sample();
        let text = svg(&report);
        let doc = parse(&text);
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.tag_name().namespace(), Some("http://www.w3.org/2000/svg"));
        let knee = doc
            .descendants()
            .find(|n| n.attribute("id") == Some("knee"))
            .expect("the knee is marked");
        assert_eq!(knee.attribute("data-concurrency"), Some("4"));
        let line = knee.children().find(|n| n.has_tag_name("line")).expect("a knee line");
        // The line stands where the knee step's point is drawn.
        let knee_x: f64 = line.attribute("x1").unwrap().parse().unwrap();
        let points: Vec<f64> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("throughput-line-point"))
            .map(|n| n.attribute("cx").unwrap().parse().unwrap())
            .collect();
        assert_eq!(points.len(), report.steps.len());
        assert!((points[2] - knee_x).abs() < 0.2, "{points:?} vs {knee_x}");
        let histograms = doc
            .descendants()
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("histogram")))
            .count();
        assert_eq!(histograms, report.steps.len(), "a histogram per step");
        // Hostile text in the labels stays text.
        assert!(text.contains("&lt;&amp;&quot;test&quot;&gt;"));
    }

    #[test]
    fn degenerate_reports_still_draw() {
        let mut report = sample();
        report.knee_concurrency = None;
        let doc_text = svg(&report);
        let doc = parse(&doc_text);
        let knee = doc.descendants().find(|n| n.attribute("id") == Some("knee")).unwrap();
        assert_eq!(knee.attribute("data-concurrency"), Some(""));
        report.steps.truncate(1);
        report.steps[0].histogram.clear();
        report.steps[0].calls_per_second = 0.0;
        parse(&svg(&report));
        report.steps.clear();
        parse(&svg(&report));
        report.tool = "bad\u{1}tool".into();
        parse(&svg(&report));
    }
}
