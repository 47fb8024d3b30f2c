//! The bench report as one HTML file: the plot inline, the table of steps,
//! and the report's JSON in a data block (never executed: its type is
//! `application/json`), which the console reads back. No script, no
//! external resource: it opens anywhere, offline.

use std::fmt::Write;

use super::{BenchReport, DATA_BLOCK_ID, escape, svg};

/// The report as a standalone HTML document.
pub fn html(report: &BenchReport) -> String {
    let mut out = String::with_capacity(32 * 1024);
    let title = format!("toolport bench: {} on {}", report.tool, report.server);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>{}</title><style>body{{font-family:system-ui,sans-serif;margin:2em;color:#1f2328}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #d0d7de;padding:4px 8px;text-align:right}}\
         tr.knee{{background:#fff8c5}}svg{{max-width:100%;height:auto}}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    match report.knee_concurrency {
        Some(c) => {
            let _ = writeln!(
                out,
                "<p>Knee: throughput stops growing (or errors begin) past concurrency <strong>{c}</strong>.</p>"
            );
        }
        None => out.push_str("<p>Knee: not reached; throughput still grows at the highest concurrency.</p>\n"),
    }
    out.push_str(&svg(report));
    out.push_str(
        "<table><thead><tr><th>concurrency</th><th>calls/s</th><th>p50 ms</th><th>p90 ms</th>\
         <th>p99 ms</th><th>max ms</th><th>errors</th></tr></thead><tbody>\n",
    );
    for s in &report.steps {
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td></tr>",
            if report.knee_concurrency == Some(s.concurrency) {
                " class=\"knee\""
            } else {
                ""
            },
            s.concurrency,
            s.calls_per_second,
            s.latency_ms.p50,
            s.latency_ms.p90,
            s.latency_ms.p99,
            s.latency_ms.max,
            s.errors
        );
    }
    out.push_str("</tbody></table>\n");
    for s in report.steps.iter().filter(|s| s.first_error.is_some()) {
        let _ = writeln!(
            out,
            "<p>c={}: first error: {}</p>",
            s.concurrency,
            escape(s.first_error.as_deref().unwrap_or_default())
        );
    }
    // No `<` at all inside the block, so nothing in a report's text can end
    // it or open markup: JSON spells it `\u003c`.
    let json = serde_json::to_string(report)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c");
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"{DATA_BLOCK_ID}\">{json}</script>\n</body></html>\n"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;

    #[test]
    fn the_report_embeds_the_plot_and_a_table_and_no_hostile_markup() {
        let mut report = sample();
        report.steps[1].first_error = Some("</script><script>alert(1)</script>".into());
        let text = html(&report);
        assert!(text.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(text.contains("id=\"knee\""));
        assert!(text.contains("<tr class=\"knee\"><td>4</td>"));
        assert_eq!(text.matches("<script").count(), 1, "only the data block");
        assert_eq!(BenchReport::from_file_text(&text).unwrap(), report);
    }
}
