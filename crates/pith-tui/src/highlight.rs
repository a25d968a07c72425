//! Syntax highlighting of code blocks with syntect (pure-Rust regex engine). The syntax and theme
//! sets load once, on first use; finished blocks are cached so a redraw never re-highlights them.
//!
//! Highlighting is most of what rendering a cell costs, so cells the view does not show yet are
//! rendered under [`deferring`]: their blocks come out in the plain code style (the same text, so
//! the same wrapped height) and are highlighted when the cell scrolls into view.

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, HighlightState, Theme, ThemeSet};
use syntect::parsing::{ParseState, SyntaxReference, SyntaxSet};

/// Highlighted code: one vector of spans per source line.
pub type Highlighted = Arc<Vec<Vec<Span<'static>>>>;

/// Blocks larger than this are shown plain: highlighting them would stall a frame.
const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;
const CACHE_ENTRIES: usize = 512;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme_set() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// The syntect theme of the colour theme in use.
fn theme() -> &'static Theme {
    static FALLBACK: OnceLock<Theme> = OnceLock::new();
    let set = theme_set();
    set.themes
        .get(super::theme::theme().syntax)
        .or_else(|| set.themes.get("base16-ocean.dark"))
        .unwrap_or_else(|| FALLBACK.get_or_init(Theme::default))
}

/// Loads the syntax and theme sets and compiles the Rust syntax (together some tens of
/// milliseconds) on a background thread, so the first frame that shows code does not pay for
/// them: started when the TUI starts, it overlaps opening the store and the engine.
pub fn warm_up() {
    let _ = std::thread::Builder::new()
        .name("pith-highlight-warm".into())
        .spawn(|| {
            highlight("fn main() {}\n", "rust");
        });
}

fn cache() -> &'static Mutex<HashMap<u64, Highlighted>> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Highlighted>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Forgets every highlighted block, so the next render highlights from scratch (what a page of
/// history never shown before costs; the benchmarks use it).
pub fn clear_cache() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
}

/// The style for code without a known language.
pub fn plain_style() -> Style {
    Style::default().fg(super::theme::theme().code_block)
}

fn syntax_theme() -> &'static str {
    super::theme::theme().syntax
}

fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let lang = lang.trim().to_ascii_lowercase();
    if lang.is_empty() {
        return None;
    }
    let alias = match lang.as_str() {
        "ts" | "typescript" | "tsx" | "jsx" | "javascript" | "mjs" | "cjs" => "js",
        "sh" | "shell" | "zsh" | "console" | "shellsession" => "bash",
        "py" | "python3" => "python",
        "yml" => "yaml",
        "c++" | "hpp" | "cc" => "cpp",
        "rs" => "rust",
        "golang" => "go",
        "toml" | "ini" | "cfg" => "ini",
        other => other,
    };
    let set = syntaxes();
    set.find_syntax_by_token(alias)
        .or_else(|| set.find_syntax_by_token(&lang))
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

fn spans_of(hl: &mut HighlightLines<'_>, line: &str) -> Vec<Span<'static>> {
    match hl.highlight_line(line, syntaxes()) {
        Ok(regions) => regions
            .into_iter()
            .filter_map(|(st, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(st)))
            })
            .collect(),
        Err(_) => vec![Span::styled(
            line.trim_end_matches(['\n', '\r']).to_string(),
            plain_style(),
        )],
    }
}

/// The block being streamed: its complete lines and the parser state after them, so each frame
/// highlights only the lines that arrived since the last one.
struct Streaming {
    lang: String,
    /// The syntect theme it was highlighted with.
    syntax: &'static str,
    done: String,
    lines: Vec<Vec<Span<'static>>>,
    highlight: HighlightState,
    parse: ParseState,
}

fn streaming() -> &'static Mutex<Option<Streaming>> {
    static S: OnceLock<Mutex<Option<Streaming>>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(None))
}

fn incremental(code: &str, lang: &str, syntax: &SyntaxReference) -> Vec<Vec<Span<'static>>> {
    let mut guard = match streaming().lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let (mut lines, mut hl, mut done) = match guard.take() {
        Some(s) if s.lang == lang && s.syntax == syntax_theme() && code.starts_with(&s.done) => (
            s.lines,
            HighlightLines::from_state(theme(), s.highlight, s.parse),
            s.done,
        ),
        _ => (
            Vec::new(),
            HighlightLines::new(syntax, theme()),
            String::new(),
        ),
    };
    let rest = &code[done.len()..];
    let complete = rest.rfind('\n').map_or(0, |i| i + 1);
    for line in syntect::util::LinesWithEndings::from(&rest[..complete]) {
        lines.push(spans_of(&mut hl, line));
    }
    done.push_str(&rest[..complete]);
    let tail = &rest[complete..];
    let (highlight, parse) = hl.state();
    let mut out = lines.clone();
    if !tail.is_empty() {
        let mut t = HighlightLines::from_state(theme(), highlight.clone(), parse.clone());
        out.push(spans_of(&mut t, tail));
    }
    *guard = Some(Streaming {
        lang: lang.to_string(),
        syntax: syntax_theme(),
        done,
        lines,
        highlight,
        parse,
    });
    out
}

fn plain(code: &str) -> Vec<Vec<Span<'static>>> {
    code.lines()
        .map(|l| vec![Span::styled(l.to_string(), plain_style())])
        .collect()
}

thread_local! {
    /// Inside [`deferring`]: blocks not highlighted before are left plain.
    static DEFER: Cell<bool> = const { Cell::new(false) };
    /// Some block was left plain inside the current [`deferring`].
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a render) with highlighting deferred: a block whose highlighting is not cached comes
/// back in the plain code style instead of being highlighted now. Returns what `f` returned and
/// whether any block was left plain, i.e. whether rendering again outside `deferring` would
/// colour something. The text, and so the wrapped height, is the same either way.
pub fn deferring<T>(f: impl FnOnce() -> T) -> (T, bool) {
    let outer = DEFER.replace(true);
    let outer_deferred = DEFERRED.replace(false);
    let out = f();
    DEFER.set(outer);
    let deferred = DEFERRED.replace(outer_deferred);
    (out, deferred)
}

/// Highlights `code` as `lang`; unknown languages come back in the plain code style.
pub fn highlight(code: &str, lang: &str) -> Highlighted {
    let mut h = DefaultHasher::new();
    syntax_theme().hash(&mut h);
    super::theme::theme().code_block.hash(&mut h);
    lang.hash(&mut h);
    code.hash(&mut h);
    let key = h.finish();
    if let Some(hit) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    if DEFER.get() && !lang.trim().is_empty() {
        // (no syntax lookup: that would load the syntax set, which a deferred render avoids)
        DEFERRED.set(true);
        return Arc::new(plain(code));
    }
    let lines = match find_syntax(lang) {
        Some(syntax) if code.len() <= MAX_HIGHLIGHT_BYTES => incremental(code, lang, syntax),
        _ => plain(code),
    };
    let lines = Arc::new(lines);
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_ENTRIES {
            c.clear();
        }
        c.insert(key, lines.clone());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_and_text_is_kept() {
        let code = "fn main() {\n    let x = 1;\n}\n";
        let out = highlight(code, "rust");
        assert_eq!(out.len(), 3);
        let line0: String = out[0].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(line0, "fn main() {");
        // more than one colour on the first line: `fn` differs from `main`
        let colours: std::collections::HashSet<_> = out[0].iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "{:?}", out[0]);
    }

    #[test]
    fn streaming_block_matches_one_shot() {
        let full = "def f(x):\n    return x * 2\n\nprint(f(3))\n";
        let mut last = None;
        for end in 1..=full.len() {
            if full.is_char_boundary(end) {
                last = Some(highlight(&full[..end], "python"));
            }
        }
        let streamed = last.unwrap();
        // a fresh highlight of the same text, bypassing both caches
        let syntax = find_syntax("python").unwrap();
        let mut hl = HighlightLines::new(syntax, theme());
        let fresh: Vec<Vec<Span<'static>>> = syntect::util::LinesWithEndings::from(full)
            .map(|l| spans_of(&mut hl, l))
            .collect();
        assert_eq!(*streamed, fresh);
    }

    #[test]
    fn deferred_blocks_are_plain_until_highlighted_once() {
        let code = "fn deferred_probe() -> u8 {\n    7\n}\n";
        let (plain_out, deferred) = deferring(|| highlight(code, "rust"));
        assert!(deferred, "a block never highlighted is left plain");
        assert_eq!(*plain_out, plain(code));
        let coloured = highlight(code, "rust");
        assert_ne!(*coloured, *plain_out, "outside deferring it is highlighted");
        // same text line by line: the same wrapped height
        let text = |l: &Vec<Vec<Span<'static>>>| -> Vec<String> {
            l.iter()
                .map(|s| s.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        assert_eq!(text(&coloured), text(&plain_out));
        let (again, deferred) = deferring(|| highlight(code, "rust"));
        assert!(!deferred, "a cached highlight is used even when deferring");
        assert_eq!(*again, *coloured);
        // a block without a language is final when plain
        let (_, deferred) = deferring(|| highlight("just text\n", ""));
        assert!(!deferred);
    }

    #[test]
    fn unknown_language_is_plain() {
        let out = highlight("a\nb", "no-such-lang");
        assert_eq!(out.len(), 2);
        assert_eq!(out[0][0].style, plain_style());
    }
}
