//! Output truncation at the source (ARCHITECTURE.md §6.1): an output over `max_lines` or
//! `max_bytes` becomes a preview (head and tail) and the full text is saved under
//! `<data_dir>/tool-output/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pith_config::ToolOutputConfig;

/// How long saved outputs are kept.
pub(crate) const RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The folder full outputs are saved in.
pub fn output_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("tool-output")
}

/// Whether `output` is over either limit.
pub fn needs_truncation(output: &str, cfg: &ToolOutputConfig) -> bool {
    output.len() > cfg.max_bytes || count_lines(output) > cfg.max_lines
}

fn count_lines(s: &str) -> usize {
    if s.is_empty() {
        return 0;
    }
    s.bytes().filter(|&b| b == b'\n').count() + usize::from(!s.ends_with('\n'))
}

/// Returns `output` unchanged when within the limits; otherwise a preview (the first and last
/// lines, within both limits) followed by a hint naming the file the full text was saved to.
pub fn truncate(output: &str, cfg: &ToolOutputConfig, data_dir: &Path, id: &str) -> String {
    if !needs_truncation(output, cfg) {
        return output.to_string();
    }
    let total_lines = count_lines(output);
    let max_lines = cfg.max_lines.max(1);
    let max_bytes = cfg.max_bytes.max(1);
    let head_lines = (max_lines * 3 / 4).max(1);
    let tail_lines = max_lines.saturating_sub(head_lines);
    let head_bytes = (max_bytes * 3 / 4).max(1);
    let tail_bytes = max_bytes.saturating_sub(head_bytes);

    let lines: Vec<&str> = output.split_inclusive('\n').collect();
    // Head.
    let mut head = String::new();
    let mut taken_head = 0;
    for line in &lines {
        if taken_head >= head_lines || head.len() + line.len() > head_bytes {
            break;
        }
        head.push_str(line);
        taken_head += 1;
    }
    if taken_head == 0 {
        // The first line alone is over the budget: keep a prefix of it.
        head.push_str(prefix_at_char(lines[0], head_bytes));
        head.push('\n');
    }
    // Tail, never overlapping the head.
    let mut tail_parts: Vec<&str> = Vec::new();
    let mut tail_len = 0;
    for line in lines.iter().skip(taken_head.max(1)).rev() {
        if tail_parts.len() >= tail_lines || tail_len + line.len() > tail_bytes {
            break;
        }
        tail_parts.push(line);
        tail_len += line.len();
    }
    tail_parts.reverse();
    let shown = taken_head.max(1) + tail_parts.len();
    let omitted = total_lines.saturating_sub(shown);

    let saved = save(output, data_dir, id);
    let mut out = head;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if omitted > 0 {
        out.push_str(&format!("\n... [{omitted} lines omitted] ...\n\n"));
    } else if taken_head == 0 {
        out.push_str("\n... [rest of the line cut] ...\n\n");
    }
    for part in &tail_parts {
        out.push_str(part);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let size = human_bytes(output.len());
    match saved {
        Ok(path) => out.push_str(&format!(
            "\n[Output truncated: {total_lines} lines, {size} in total. The full output is saved at {}. \
             Use grep on that file, or read it with offset/limit, to see the parts not shown here.]",
            path.display()
        )),
        Err(e) => {
            tracing::warn!(error = %e, "could not save truncated tool output");
            out.push_str(&format!(
                "\n[Output truncated: {total_lines} lines, {size} in total. The full output could not be saved ({e}); \
                 rerun with a narrower command or filter the output.]"
            ))
        }
    }
    out
}

fn save(output: &str, data_dir: &Path, id: &str) -> std::io::Result<PathBuf> {
    let dir = output_dir(data_dir);
    std::fs::create_dir_all(&dir)?;
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if name.is_empty() {
        format!("tool_{}", ulid::Ulid::new())
    } else {
        name
    };
    let path = dir.join(name);
    std::fs::write(&path, output)?;
    Ok(path)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub(crate) fn prefix_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

pub fn human_bytes(n: usize) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

/// Deletes saved outputs older than seven days. Errors are logged, never returned.
pub fn cleanup(data_dir: &Path) {
    cleanup_older_than(data_dir, RETENTION);
}

fn cleanup_older_than(data_dir: &Path, age: Duration) {
    let dir = output_dir(data_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|d| d > age);
        if old && let Err(e) = std::fs::remove_file(entry.path()) {
            tracing::debug!(path = %entry.path().display(), error = %e, "tool-output cleanup failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(max_lines: usize, max_bytes: usize) -> ToolOutputConfig {
        ToolOutputConfig {
            max_lines,
            max_bytes,
        }
    }

    #[test]
    fn small_output_unchanged_and_nothing_saved() {
        let dir = tempfile::tempdir().unwrap();
        let out = truncate("a\nb\n", &cfg(10, 100), dir.path(), "x1");
        assert_eq!(out, "a\nb\n");
        assert!(!output_dir(dir.path()).exists());
    }

    #[test]
    fn too_many_lines_saves_full_text_and_hints() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let out = truncate(&text, &cfg(100, 1_000_000), dir.path(), "call_1");
        let saved = output_dir(dir.path()).join("call_1");
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
        assert!(out.starts_with("line 1\n"));
        assert!(out.contains("line 75\n") && !out.contains("line 76\n"));
        assert!(
            out.contains("line 1000\n")
                && out.contains("line 976\n")
                && !out.contains("line 975\n")
        );
        assert!(out.contains("[900 lines omitted]"));
        assert!(out.contains(&saved.display().to_string()));
        assert!(out.contains("grep") && out.contains("offset/limit"));
        let preview_lines = out.lines().filter(|l| l.starts_with("line ")).count();
        assert_eq!(preview_lines, 100);
    }

    #[test]
    fn too_many_bytes_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = "é".repeat(10_000); // 20,000 bytes, one line
        let out = truncate(&text, &cfg(2000, 1000), dir.path(), "c/2");
        let saved = output_dir(dir.path()).join("c_2");
        assert_eq!(std::fs::read_to_string(saved).unwrap(), text);
        let preview = out.split("\n\n").next().unwrap();
        assert!(preview.len() <= 1000, "{}", preview.len());
        assert!(out.contains("Output truncated"));
    }

    #[test]
    fn byte_limit_bounds_preview() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..5000).map(|i| format!("{i:08}\n")).collect();
        let out = truncate(&text, &cfg(100_000, 2000), dir.path(), "b");
        let body: usize = out
            .lines()
            .filter(|l| l.len() == 8)
            .map(|l| l.len() + 1)
            .sum();
        assert!(body <= 2000, "{body}");
        assert!(out.starts_with("00000000\n") && out.contains("00004999\n"));
    }

    #[test]
    fn cleanup_removes_only_old_files() {
        let dir = tempfile::tempdir().unwrap();
        let od = output_dir(dir.path());
        std::fs::create_dir_all(&od).unwrap();
        std::fs::write(od.join("old"), "x").unwrap();
        std::fs::write(od.join("new"), "x").unwrap();
        let old_time = SystemTime::now() - Duration::from_secs(8 * 24 * 3600);
        std::fs::File::options()
            .write(true)
            .open(od.join("old"))
            .unwrap()
            .set_modified(old_time)
            .unwrap();
        cleanup(dir.path());
        assert!(!od.join("old").exists());
        assert!(od.join("new").exists());
        // A missing folder is fine.
        cleanup(&dir.path().join("nope"));
    }
}
