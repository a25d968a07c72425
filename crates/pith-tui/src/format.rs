//! Small formatting helpers: token counts, money, durations, sanitising untrusted text, plurals,
//! dates and home-relative paths.

/// `950`, `4.2k`, `41.2k`, `200k`, `1.2M` (the one token figure every front end shows).
pub use pith_protocol::compaction_note::tokens;

/// `$0.00`, `<$0.01`, `$1.23`.
pub fn cost(c: f64) -> String {
    if !c.is_finite() || c <= 0.0 {
        "$0.00".to_string()
    } else if c < 0.01 {
        "<$0.01".to_string()
    } else {
        format!("${c:.2}")
    }
}

/// `850ms`, `1.2s`, `42s`, `3m05s`, `1h02m`.
pub fn duration_ms(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1_000.0)
    } else if ms < 60_000 {
        format!("{}s", ms / 1_000)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms / 1_000) % 60)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms / 60_000) % 60)
    }
}

/// Removes what would corrupt the screen (the sanitiser every front end shares).
pub use pith_protocol::text::sanitize;

/// One line of text exactly as given, for a question the user must judge: nothing is dropped
/// or rewound as [`sanitize`] does, what the terminal would not show is written out (control
/// characters as `^X`, direction overrides and invisible characters as `<U+202E>`), and a tab
/// becomes four spaces. `s` should hold no newline (split lines first).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            '\u{7f}' => out.push_str("^?"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c if c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}' | '\u{feff}') =>
            {
                out.push_str(&format!("<U+{:04X}>", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Cuts `s` to at most `max` display columns, adding `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    use unicode_truncate::UnicodeTruncateStr;
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let (head, _) = s.unicode_truncate(max - 1);
    format!("{head}…")
}

/// Display width of a string.
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `~/x` for a path under the home directory.
pub fn home_short(path: &str) -> String {
    if let Ok(home) = std::env::var("HOME")
        && !home.is_empty()
        && let Some(rest) = path.strip_prefix(&home)
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return format!("~{rest}");
    }
    path.to_string()
}

/// The `s` of a count other than one: `1 file`, `2 files`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `2024-05-01 14:03` in local-agnostic UTC.
pub fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_writes_out_what_a_terminal_would_hide() {
        assert_eq!(visible("rm -rf /\rls"), "rm -rf /^Mls");
        assert_eq!(visible("a\u{1b}[2Kb\tc"), "a^[[2Kb    c");
        assert_eq!(visible("x\u{202e}y\u{7f}"), "x<U+202E>y^?");
        assert_eq!(visible("plain ünïcode"), "plain ünïcode");
    }

    #[test]
    fn token_figures() {
        assert_eq!(tokens(0), "0");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(4_210), "4.2k");
        assert_eq!(tokens(41_200), "41.2k");
        assert_eq!(tokens(200_000), "200k");
        assert_eq!(tokens(999_999), "1M");
        assert_eq!(tokens(1_250_000), "1.2M");
    }

    #[test]
    fn money_and_time() {
        assert_eq!(cost(0.0), "$0.00");
        assert_eq!(cost(0.004), "<$0.01");
        assert_eq!(cost(1.234), "$1.23");
        assert_eq!(cost(f64::NAN), "$0.00");
        assert_eq!(duration_ms(850), "850ms");
        assert_eq!(duration_ms(1_234), "1.2s");
        assert_eq!(duration_ms(185_000), "3m05s");
    }

    #[test]
    fn sanitize_strips_escapes_and_overwrites() {
        assert_eq!(sanitize("plain\ntext"), "plain\ntext");
        assert_eq!(sanitize("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(sanitize("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(sanitize("a\r\nb"), "a\nb");
        assert_eq!(sanitize("\u{1b}]0;title\u{7}x\ty"), "x    y");
        assert_eq!(sanitize("bell\u{7}"), "bell");
    }

    #[test]
    fn truncate_by_columns() {
        assert_eq!(truncate("hello", 10), "hello");
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
        assert_eq!(truncate("abc", 0), "");
    }

    #[test]
    fn plurals_and_dates() {
        assert_eq!(format!("1 file{}", plural(1)), "1 file");
        assert_eq!(format!("0 file{}", plural(0)), "0 files");
        assert_eq!(format!("2 file{}", plural(2)), "2 files");
        assert_eq!(when(1_714_572_180_000), "2024-05-01 14:03");
        assert_eq!(when(i64::MAX), "");
    }
}
