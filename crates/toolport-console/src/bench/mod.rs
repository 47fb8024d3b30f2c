//! The results of `toolport bench` as data, and the pictures drawn from
//! them: an SVG plot ([`svg`]) and a self-contained HTML report ([`html`])
//! that the console shows as "the last report".
//!
//! The JSON form is what `toolport bench --json` writes; the HTML report
//! carries the same JSON in a data block, so either file can be read back
//! with [`BenchReport::from_file_text`].

mod html;
mod svg;

use serde::{Deserialize, Serialize};

pub use self::html::html;
pub use self::svg::svg;

/// One run of `toolport bench`: a concurrency sweep of calls to one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The server: its URL, or the stdio command.
    pub server: String,
    /// The tool called.
    pub tool: String,
    /// The concurrency past which throughput stops growing (or errors
    /// begin), if the sweep reached it.
    pub knee_concurrency: Option<usize>,
    /// The steps, in the order they ran.
    pub steps: Vec<BenchStep>,
}

/// One concurrency step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchStep {
    /// Calls in flight at once.
    pub concurrency: usize,
    /// How long the step ran.
    pub seconds: f64,
    /// Calls answered successfully.
    pub calls: u64,
    /// Successful calls per second.
    pub calls_per_second: f64,
    /// Calls that failed.
    pub errors: u64,
    /// The first failure's reason.
    #[serde(default)]
    pub first_error: Option<String>,
    /// Latency quantiles.
    pub latency_ms: Latency,
    /// The latency histogram: counts per doubling of latency.
    #[serde(default)]
    pub histogram: Vec<Bucket>,
}

/// Latency quantiles of a step, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest call.
    pub max: f64,
}

/// One bar of a latency histogram: calls at most `upper_ms` and more than
/// half of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's upper bound.
    pub upper_ms: f64,
    /// Calls in it.
    pub count: u64,
}

/// The `id` of the HTML report's data block.
pub(crate) const DATA_BLOCK_ID: &str = "toolport-bench-data";

/// Why a file is not a bench report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAReport(pub String);

impl std::fmt::Display for NotAReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAReport {}

impl BenchReport {
    /// Reads the JSON `--json` wrote, or the data block of an HTML report.
    pub fn from_file_text(text: &str) -> Result<BenchReport, NotAReport> {
        let json = if text.trim_start().starts_with('{') {
            text.to_owned()
        } else {
            let marker = format!("id=\"{DATA_BLOCK_ID}\">");
            let start = text
                .find(&marker)
                .ok_or_else(|| NotAReport("neither bench JSON nor an HTML report of toolport bench".into()))?
                + marker.len();
            let end = text[start..]
                .find("</script>")
                .ok_or_else(|| NotAReport("the report's data block is not closed".into()))?;
            text[start..start + end].to_owned()
        };
        serde_json::from_str(&json).map_err(|e| NotAReport(format!("not a bench report: {e}")))
    }
}

/// Text for XML and HTML: `&`, `<`, `>` and quotes escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0 at all.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sweep whose throughput flattens after concurrency 4.
    pub(crate) fn sample() -> BenchReport {
        let step = |concurrency: usize, rps: f64, p50: f64, p99: f64| BenchStep {
            concurrency,
            seconds: 1.0,
            calls: rps as u64,
            calls_per_second: rps,
            errors: 0,
            first_error: None,
            latency_ms: Latency {
                p50,
                p90: p99 * 0.8,
                p99,
                max: p99 * 2.0,
            },
            histogram: vec![
                Bucket {
                    upper_ms: 0.1,
                    count: 3,
                },
                Bucket {
                    upper_ms: 0.2,
                    count: rps as u64 / 2,
                },
                Bucket {
                    upper_ms: 0.4,
                    count: rps as u64 / 3,
                },
            ],
        };
        BenchReport {
            server: "http://127.0.0.1:8080/mcp <&\"test\">".into(),
            tool: "echo".into(),
            knee_concurrency: Some(4),
            steps: vec![
                step(1, 1000.0, 0.9, 2.0),
                step(2, 1900.0, 1.0, 2.5),
                step(4, 3500.0, 1.1, 3.0),
                step(8, 3600.0, 2.2, 6.0),
                step(16, 3550.0, 4.5, 12.0),
            ],
        }
    }

    #[test]
    fn a_report_reads_back_from_its_json_and_from_its_html() {
        let report = sample();
        let json = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(BenchReport::from_file_text(&json).unwrap(), report);
        assert_eq!(BenchReport::from_file_text(&html(&report)).unwrap(), report);
        assert!(BenchReport::from_file_text("<html>nothing</html>").is_err());
        assert!(BenchReport::from_file_text("{\"server\": 1}").is_err());
        assert!(BenchReport::from_file_text("").is_err());
    }
}
