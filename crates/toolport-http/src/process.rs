//! The process's own metrics, in the names every Prometheus client library
//! uses (`process_resident_memory_bytes`, `process_cpu_seconds_total`,
//! `process_open_fds`, ...), and the build's identity, appended to
//! `/metrics` when it is rendered.
//!
//! Read from `/proc/self` on Linux at each scrape: a handful of small reads,
//! cheaper than a collector crate's dependency tree. Elsewhere only the
//! build info is written.

use std::fmt::Write;

/// Clock ticks per second of `/proc/<pid>/stat` times: `USER_HZ`, 100 on
/// every architecture Linux runs Toolport on (the kernel's ABI promises it
/// to user space whatever its internal tick rate).
const USER_HZ: f64 = 100.0;

/// One sample with its `# HELP` and `# TYPE` lines.
fn sample(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n");
}

/// The Prometheus text of the process metrics and build info.
pub(crate) fn render(server_name: &str, server_version: &str) -> String {
    let mut out = String::with_capacity(1024);
    let _ = write!(
        out,
        "# HELP toolport_build_info The Toolport build and the server it serves; always 1\n\
         # TYPE toolport_build_info gauge\n\
         toolport_build_info{{version=\"{}\",server=\"{}\",server_version=\"{}\"}} 1\n",
        env!("CARGO_PKG_VERSION"),
        escape(server_name),
        escape(server_version),
    );
    if let Some(stat) = Stat::read() {
        let cpu = (stat.utime + stat.stime) / USER_HZ;
        sample(
            &mut out,
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            cpu,
        );
        sample(
            &mut out,
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            stat.vsize,
        );
        sample(
            &mut out,
            "process_threads",
            "gauge",
            "Number of OS threads.",
            stat.threads,
        );
        if let Some(boot) = boot_time() {
            sample(
                &mut out,
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since unix epoch in seconds.",
                boot + stat.start_ticks / USER_HZ,
            );
        }
    }
    if let Some(rss) = resident_bytes() {
        sample(
            &mut out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            rss,
        );
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        // The directory handle itself is one of the entries: not counted.
        let open = fds.count().saturating_sub(1);
        sample(
            &mut out,
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            open as f64,
        );
    }
    if let Some(max) = max_fds() {
        sample(
            &mut out,
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            max,
        );
    }
    out
}

/// A label value as the text format wants it.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The fields of `/proc/self/stat` that matter here.
struct Stat {
    utime: f64,
    stime: f64,
    threads: f64,
    start_ticks: f64,
    vsize: f64,
}

impl Stat {
    fn read() -> Option<Stat> {
        let text = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The command name (field 2) is in parentheses and may hold spaces:
        // the fields after the last ')' start with field 3.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
        Some(Stat {
            utime: field(14)?,
            stime: field(15)?,
            threads: field(20)?,
            start_ticks: field(22)?,
            vsize: field(23)?,
        })
    }
}

fn resident_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

fn boot_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

fn max_fds() -> Option<f64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_has_help_and_type_and_label_values_are_escaped() {
        let text = render("demo \"x\"", "1\n2");
        assert!(text.contains(r#"server="demo \"x\"""#), "{text}");
        assert!(text.contains(r#"server_version="1\n2""#), "{text}");
        let mut helped = std::collections::BTreeSet::new();
        let mut typed = std::collections::BTreeSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                helped.insert(rest.split(' ').next().unwrap().to_owned());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                typed.insert(rest.split(' ').next().unwrap().to_owned());
            } else {
                let name = line.split(['{', ' ']).next().unwrap();
                assert!(helped.contains(name) && typed.contains(name), "{name} undeclared");
            }
        }
        if cfg!(target_os = "linux") {
            for name in [
                "process_cpu_seconds_total",
                "process_resident_memory_bytes",
                "process_open_fds",
                "process_max_fds",
                "process_start_time_seconds",
            ] {
                assert!(typed.contains(name), "{name} missing: {text}");
            }
        }
    }
}
