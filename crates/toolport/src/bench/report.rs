//! What `toolport bench` prints and writes.

use std::time::Duration;

use hdrhistogram::Histogram;
use toolport_console::bench::{BenchReport, BenchStep, Bucket, Latency};

/// The outcome of one concurrency step.
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) concurrency: usize,
    pub(crate) elapsed: Duration,
    pub(crate) calls: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) latencies: Histogram<u64>,
}

impl Step {
    pub(crate) fn new(
        concurrency: usize,
        elapsed: Duration,
        latencies: Histogram<u64>,
        errors: u64,
        first_error: Option<String>,
    ) -> Step {
        Step {
            concurrency,
            elapsed,
            calls: latencies.len(),
            errors,
            first_error,
            latencies,
        }
    }

    /// Fails with the error of a warm-up that did not succeed once.
    pub(crate) fn check_first(&self) -> anyhow::Result<()> {
        match (&self.first_error, self.calls) {
            (Some(error), 0) => anyhow::bail!("the first call failed: {error}"),
            _ => Ok(()),
        }
    }

    pub(crate) fn rps(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn ms(&self, quantile: f64) -> f64 {
        self.latencies.value_at_quantile(quantile) as f64 / 1000.0
    }
}

/// The first step where throughput grows by less than 10 % over the step
/// before, or where errors begin: the concurrency past which waiting only
/// adds latency.
pub(crate) fn knee(steps: &[Step]) -> Option<usize> {
    for (i, step) in steps.iter().enumerate() {
        if step.errors > 0 {
            return Some(step.concurrency);
        }
        if i > 0 && step.rps() < steps[i - 1].rps() * 1.10 {
            return Some(steps[i - 1].concurrency);
        }
    }
    None
}

pub(crate) fn print_step(step: &Step) {
    eprintln!(
        "c={:<4} {:>9.0} calls/s  p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  errors {}",
        step.concurrency,
        step.rps(),
        step.ms(0.5),
        step.ms(0.9),
        step.ms(0.99),
        step.latencies.max() as f64 / 1000.0,
        step.errors
    );
    if let Some(error) = &step.first_error {
        eprintln!("       first error: {error}");
    }
    // A latency histogram: counts per doubling of latency.
    let total = step.calls.max(1);
    for bucket in histogram(step).iter().filter(|b| b.count > 0) {
        let bar = "#".repeat(((bucket.count * 40).div_ceil(total)) as usize);
        eprintln!("       {:>9.3} ms  {bar} {}", bucket.upper_ms, bucket.count);
    }
}

pub(crate) fn print_summary(label: &str, tool: &str, steps: &[Step], knee: Option<usize>) {
    eprintln!("\n{label}, tool {tool}");
    eprintln!("| c | calls/s | p50 ms | p99 ms | errors |");
    eprintln!("|---:|---:|---:|---:|---:|");
    for s in steps {
        eprintln!(
            "| {} | {:.0} | {:.3} | {:.3} | {} |",
            s.concurrency,
            s.rps(),
            s.ms(0.5),
            s.ms(0.99),
            s.errors
        );
    }
    match knee {
        Some(c) => eprintln!("knee: throughput stops growing (or errors begin) past concurrency {c}"),
        None => eprintln!("knee: not reached; throughput still grows at the highest concurrency"),
    }
}

/// The latency histogram of a step: calls per doubling of latency, from
/// under 50 µs up to the slowest call.
fn histogram(step: &Step) -> Vec<Bucket> {
    let mut buckets = Vec::new();
    let mut upper_us = 50u64;
    while upper_us / 2 <= step.latencies.max() && upper_us <= 60_000_000 {
        // The first bucket takes everything faster, too.
        let lower = if buckets.is_empty() { 0 } else { upper_us / 2 };
        buckets.push(Bucket {
            upper_ms: upper_us as f64 / 1000.0,
            count: step.latencies.count_between(lower, upper_us.saturating_sub(1)),
        });
        upper_us *= 2;
    }
    buckets
}

/// The run as data: what `--json` writes and `--plot`/`--report` draw.
pub(crate) fn report(label: &str, tool: &str, steps: &[Step], knee: Option<usize>) -> BenchReport {
    BenchReport {
        server: label.to_owned(),
        tool: tool.to_owned(),
        knee_concurrency: knee,
        steps: steps
            .iter()
            .map(|s| BenchStep {
                concurrency: s.concurrency,
                seconds: s.elapsed.as_secs_f64(),
                calls: s.calls,
                calls_per_second: s.rps(),
                errors: s.errors,
                first_error: s.first_error.clone(),
                latency_ms: Latency {
                    p50: s.ms(0.5),
                    p90: s.ms(0.9),
                    p99: s.ms(0.99),
                    max: s.latencies.max() as f64 / 1000.0,
                },
                histogram: histogram(s),
            })
            .collect(),
    }
}

pub(crate) fn json(report: &BenchReport) -> String {
    format!("{}\n", serde_json::to_string_pretty(report).unwrap_or_default())
}

pub(crate) fn csv(steps: &[Step]) -> String {
    let mut out = String::from("concurrency,seconds,calls,calls_per_second,errors,p50_ms,p90_ms,p99_ms,max_ms\n");
    for s in steps {
        out.push_str(&format!(
            "{},{:.3},{},{:.1},{},{:.3},{:.3},{:.3},{:.3}\n",
            s.concurrency,
            s.elapsed.as_secs_f64(),
            s.calls,
            s.rps(),
            s.errors,
            s.ms(0.5),
            s.ms(0.9),
            s.ms(0.99),
            s.latencies.max() as f64 / 1000.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(concurrency: usize, calls: u64, errors: u64) -> Step {
        let mut h = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        for _ in 0..calls {
            h.record(1000).unwrap();
        }
        Step::new(concurrency, Duration::from_secs(1), h, errors, None)
    }

    #[test]
    fn the_report_carries_every_step_with_its_histogram() {
        let steps = [step(1, 100, 0), step(2, 190, 1)];
        let report = report("http://x/mcp", "echo", &steps, knee(&steps));
        assert_eq!(report.knee_concurrency, Some(2));
        assert_eq!(report.steps.len(), 2);
        let counted: u64 = report.steps[0].histogram.iter().map(|b| b.count).sum();
        assert_eq!(counted, 100, "every call is in one bucket");
        assert!(
            report.steps[0]
                .histogram
                .iter()
                .any(|b| b.upper_ms > 1.0 && b.count == 100)
        );
        let text = json(&report);
        assert_eq!(BenchReport::from_file_text(&text).unwrap(), report);
    }

    #[test]
    fn the_knee_is_where_growth_stops_or_errors_begin() {
        assert_eq!(knee(&[step(1, 100, 0), step(2, 190, 0), step(4, 200, 0)]), Some(2));
        assert_eq!(knee(&[step(1, 100, 0), step(2, 200, 0), step(4, 300, 3)]), Some(4));
        assert_eq!(knee(&[step(1, 100, 0), step(2, 200, 0)]), None);
    }
}
