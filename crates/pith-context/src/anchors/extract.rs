//! The patterns of the anchor index: which identifiers one text holds, by what kind of text it
//! is (the user's own words, prose, a command line, a tool's output). Each pattern runs on what
//! the ones before it left: a matched span is blanked, so a URL's host is not read again as a
//! path, a path's line as a port or a number.

use std::sync::LazyLock;

use pith_protocol::carried::AnchorKind;
use regex::Regex;

/// What kind of text is scanned, and so which kinds of identifiers are taken from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// What the user typed: every kind, numbers too.
    Words,
    /// An assistant's text: every kind but bare numbers.
    Prose,
    /// A command line (its own anchor is the command): URLs, hashes, tickets, ports.
    Command,
    /// A tool's output or a pasted block: only error lines and codes, paths with a line, URLs,
    /// hashes and the last few labelled measurements — never every number in a log.
    Output,
}

impl Scope {
    fn takes(self, kind: AnchorKind) -> bool {
        use AnchorKind as K;
        match self {
            Scope::Words => true,
            Scope::Prose => kind != K::Number,
            Scope::Command => matches!(kind, K::Url | K::Hash | K::Ticket | K::Port),
            Scope::Output => matches!(kind, K::Error | K::Path | K::Url | K::Hash | K::Figure),
        }
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("anchor pattern")
}

static URL: LazyLock<Regex> = LazyLock::new(|| re(r#"\b(?:https?|wss?|ftp)://[^\s<>"'`)\]]+"#));
/// A line that starts an error report (or a failing test's).
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^[ \t]*(?:[×✗✘✕→❯][ \t]*)*(?:--- FAIL:.*|(?i:error|fatal|panic)(?:\[[\w-]+\])?[ \t]*[:!].*|[\w.]*(?:Error|Exception)(?::.*)?|.*\bpanicked at\b.*|FAILED\b.*|.*\.\.\. FAILED|test result: FAILED.*|npm ERR!.*)[ \t]*$",
    )
});
/// `host:port` with a host that is not a file name: localhost, an IPv4 address, a name under
/// a top-level domain.
static HOST_PORT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z][\w-]*(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|internal|local|lan|cloud|ai|co|svc|cluster|localdomain)):(\d{2,5})\b",
    )
});
/// `File "x.py", line 12` (Python's tracebacks).
static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| re(r#"File "([^"]+)", line (\d+)"#));
/// A file path with an extension, then `:line` and `:column` when given.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:[A-Za-z]:)?(?:\.{1,2}[/\\]|[/\\~])?(?:[\w.@+-]+[/\\])*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}(:\d+(?::\d+)?)?",
    )
});
static ERROR_CODE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:E\d{4}|TS\d{4}|CS\d{4}|(?:ORA|PLS|TNS|SP2)-\d{4,5}|SQLSTATE[ \t]*\[?\w{5}\]?|E(?:NOENT|ACCES|PERM|EXIST|NOTDIR|ISDIR|INVAL|MFILE|NOSPC|PIPE|AGAIN|BUSY|CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|ADDRINUSE|ADDRNOTAVAIL|HOSTUNREACH|NETUNREACH|NOTEMPTY|ROFS|NOMEM|NOTFOUND|SRCH|BADF|LOOP|NAMETOOLONG)|[A-Z]\w*(?:Error|Exception))\b",
    )
});
static HTTP_STATUS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:HTTP(?:/\d(?:\.\d)?)?|(?i:status)(?: (?i:code))?)[ \t:]+([1-5]\d\d)\b")
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
});
static HASH: LazyLock<Regex> = LazyLock::new(|| re(r"\b(?:[0-9a-f]{7,40}|[0-9a-f]{64})\b"));
static TICKET: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?:CVE-\d{4}-\d{4,}|[A-Z][A-Z0-9]{1,9}-\d{1,6})\b"));
/// `#4521` at the start of a word (an issue or pull request).
static ISSUE: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[\s(\[])(#\d{2,6})\b"));
static PORT_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(?i:port)[ \t]*[=:]?[ \t]*(\d{2,5})\b"));
static BARE_PORT: LazyLock<Regex> = LazyLock::new(|| re(r#"(?:^|[\s(=,'"])(:\d{2,5})\b"#));
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:v\d+(?:\.\d+){1,3}|\d+\.\d+\.\d+)(?:-[0-9A-Za-z.]+)?\b|\b(?i:version|python|node|rust|rustc|go|java|ruby|php|postgres|postgresql|mysql|redis)[ \t]+v?\d+\.\d+(?:\.\d+)?\b",
    )
});
/// A number with what goes with it: a currency sign, a unit or a percent sign.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:[$€£][ \t]?)?\b\d+(?:[,_]\d+)*(?:[.:/-]\d+)*(?:[ \t]?(?:%|(?:ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|[KMGT]i?B|[kKMG]|x|px|rem|em|tokens?|lines?|rps|qps|files?|rows?|users?|workers?|threads?|cores?|retries|times|requests?)\b))?",
    )
});

/// Prefixes of `ABC-123` that name a standard or an algorithm, not a ticket.
const NOT_TICKETS: [&str; 13] = [
    "UTF", "ISO", "SHA", "MD5", "AES", "RSA", "TLS", "SSL", "HTTP", "IPV4", "IPV6", "X509", "GPT",
];

/// An identifier found in a text, at byte `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub at: usize,
    pub kind: AnchorKind,
    pub text: String,
}

/// The identifiers of `text` that `scope` takes, in the order they appear.
pub(crate) fn scan(text: &str, scope: Scope) -> Vec<Found> {
    let mut s = Scan {
        buf: text.to_string(),
        scope,
        out: Vec::new(),
    };
    s.take(&URL, AnchorKind::Url, |m| {
        Some(
            m[0].trim_end_matches(['.', ',', ';', ':', '!', '?'])
                .to_string(),
        )
    });
    let error_lines = s.error_lines();
    let kinds_of_prose = scope != Scope::Output;
    if kinds_of_prose {
        s.take(&HOST_PORT, AnchorKind::Port, |m| Some(m[0].to_string()));
    }
    s.take(&PY_FRAME, AnchorKind::Path, |m| {
        Some(format!("{}:{}", &m[1], &m[2]))
    });
    s.take(&PATH, AnchorKind::Path, |m| {
        let with_line = m.get(1).is_some();
        let separated = m[0].contains(['/', '\\']);
        (with_line || (separated && kinds_of_prose)).then(|| m[0].to_string())
    });
    s.error_codes(&error_lines);
    s.hashes();
    if !kinds_of_prose {
        s.figures();
        // Nothing after this is taken from an output (the bulk of what is scanned).
        s.out.sort_by_key(|f| f.at);
        return s.out;
    }
    s.take(&TICKET, AnchorKind::Ticket, |m| {
        let t = &m[0];
        let prefix = t.split('-').next().unwrap_or("");
        (!NOT_TICKETS.contains(&prefix)).then(|| t.to_string())
    });
    s.take(&ISSUE, AnchorKind::Ticket, |m| Some(m[1].to_string()));
    s.take(&PORT_WORD, AnchorKind::Port, |m| {
        port(&m[1]).map(|p| format!("port {p}"))
    });
    s.take(&BARE_PORT, AnchorKind::Port, |m| {
        port(&m[1][1..]).map(|p| format!(":{p}"))
    });
    s.versions_and_numbers();
    s.out.sort_by_key(|f| f.at);
    s.out
}

/// A labelled measurement on a line of its own (`Execution Time: 1843.771 ms`,
/// `p95: 24 ms`, `Total size: 1.2 MB`).
static FIGURE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^[ \t]*([A-Za-z][A-Za-z0-9 _/()%.-]{0,38}[A-Za-z0-9)%]):[ \t]+([\d][\d.,]*[ \t]?(?:ms|µs|us|ns|s|secs?|seconds|min|[kKMGT]i?B|bytes|%|rows|req/s|requests/sec))[ \t]*$",
    )
});

/// The most labelled measurements taken from one output (its last ones: a run's totals come
/// at its end).
const FIGURES_PER_OUTPUT: usize = 3;

/// The most characters of one anchor's text.
pub(crate) const TEXT_MAX: usize = 160;

/// `text` cut to [`TEXT_MAX`] characters (marked with `…`).
pub(crate) fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= TEXT_MAX {
        return text.to_string();
    }
    let mut out: String = text.chars().take(TEXT_MAX - 1).collect();
    out.push('…');
    out
}

/// A port number: 1 to 65535.
fn port(digits: &str) -> Option<u16> {
    digits.parse::<u16>().ok().filter(|&p| p > 0)
}

/// A text being scanned: what is left of it (taken spans blanked) and what was found.
struct Scan {
    buf: String,
    scope: Scope,
    out: Vec<Found>,
}

impl Scan {
    fn push(&mut self, at: usize, kind: AnchorKind, text: &str) {
        if self.scope.takes(kind) && !text.is_empty() {
            self.out.push(Found {
                at,
                kind,
                text: cut(text),
            });
        }
    }

    /// The last [`FIGURES_PER_OUTPUT`] labelled measurements of an output.
    fn figures(&mut self) {
        if !self.scope.takes(AnchorKind::Figure) {
            return;
        }
        let found: Vec<(usize, String)> = FIGURE_LINE
            .captures_iter(&self.buf)
            .map(|c| {
                (
                    c.get(0).map_or(0, |m| m.start()),
                    format!("{}: {}", &c[1], &c[2]),
                )
            })
            .collect();
        let skip = found.len().saturating_sub(FIGURES_PER_OUTPUT);
        for (at, text) in found.into_iter().skip(skip) {
            self.push(at, AnchorKind::Figure, &text);
        }
    }

    /// The lines that start an error report, taken whole (when the scope takes errors); their
    /// spans, so a code inside one is not taken again.
    fn error_lines(&mut self) -> Vec<(usize, usize)> {
        if !self.scope.takes(AnchorKind::Error) {
            return Vec::new();
        }
        let buf = self.buf.clone();
        ERROR_LINE
            .find_iter(&buf)
            .map(|m| {
                self.push(m.start(), AnchorKind::Error, m.as_str().trim());
                (m.start(), m.end())
            })
            .collect()
    }

    /// Error codes and HTTP statuses, except those inside one of `error_lines` or named by one
    /// (`rustc --explain E0308` after `error[E0308]: …`).
    fn error_codes(&mut self, error_lines: &[(usize, usize)]) {
        let codes: Vec<(usize, usize, String)> = ERROR_CODE
            .find_iter(&self.buf)
            .map(|m| (m.start(), m.end(), m.as_str().to_string()))
            .chain(HTTP_STATUS.captures_iter(&self.buf).filter_map(|c| {
                let m = c.get(0)?;
                Some((m.start(), m.end(), format!("HTTP {}", &c[1])))
            }))
            .collect();
        let mut blanks = Vec::with_capacity(codes.len());
        for (a, b, code) in codes {
            blanks.push((a, b));
            let in_a_line = error_lines.iter().any(|&(s, e)| s <= a && a < e);
            let named = self
                .out
                .iter()
                .any(|f| f.kind == AnchorKind::Error && f.text.contains(code.as_str()));
            if !in_a_line && !named {
                self.push(a, AnchorKind::Error, &code);
            }
        }
        // Codes and statuses may overlap (`HTTP 503 Error`…): blank in order, each once.
        blanks.sort_unstable();
        blanks.dedup_by(|next, prev| next.0 < prev.1);
        self.blank_all(&blanks);
    }

    /// UUIDs, then hex words of a hash's length with a digit and a letter (not the suffix of
    /// a name: `pith-1a2b3c4d…`).
    fn hashes(&mut self) {
        self.take(&UUID, AnchorKind::Hash, |m| Some(m[0].to_string()));
        let buf = self.buf.clone();
        self.take(&HASH, AnchorKind::Hash, |m| {
            let h = m.get(0)?;
            let before = buf[..h.start()].chars().next_back();
            let word = h.as_str();
            (word.bytes().any(|b| b.is_ascii_digit())
                && word.bytes().any(|b| b.is_ascii_alphabetic())
                && !before.is_some_and(|c| matches!(c, '-' | '_' | '.')))
            .then(|| word.to_string())
        });
    }

    /// Versions (not an IP address), then — where the scope takes them — numbers of two digits
    /// or more, or with a unit, a sign or a decimal point.
    fn versions_and_numbers(&mut self) {
        let buf = self.buf.clone();
        self.take(&VERSION, AnchorKind::Version, |m| {
            let v = m.get(0)?;
            let mut after = buf[v.end()..].chars();
            let before = buf[..v.start()].chars().next_back();
            let more =
                after.next() == Some('.') && after.next().is_some_and(|c| c.is_ascii_digit());
            let ip_like = more || before.is_some_and(|c| c == '.' || c.is_ascii_digit());
            (!ip_like).then(|| v.as_str().to_string())
        });
        if !self.scope.takes(AnchorKind::Number) {
            return;
        }
        self.take(&NUMBER, AnchorKind::Number, |m| {
            let n = m[0].trim();
            let digits = n.bytes().filter(u8::is_ascii_digit).count();
            let qualified = n
                .chars()
                .any(|c| !c.is_ascii_digit() && c != ',' && c != '_');
            (digits >= 2 || qualified).then(|| n.to_string())
        });
    }

    /// Replaces the bytes of each of `spans` (in order, not overlapping, on character
    /// boundaries) with spaces, in one pass.
    fn blank_all(&mut self, spans: &[(usize, usize)]) {
        if spans.is_empty() {
            return;
        }
        let mut out = String::with_capacity(self.buf.len());
        let mut at = 0;
        for &(a, b) in spans {
            out.push_str(&self.buf[at..a]);
            out.extend(std::iter::repeat_n(' ', b - a));
            at = b;
        }
        out.push_str(&self.buf[at..]);
        self.buf = out;
    }

    /// Takes `re`'s matches as `kind` where `keep` says what a match is (`None`: not one).
    /// Every match is blanked, taken or not (a path the scope does not take is still no hash).
    fn take(
        &mut self,
        re: &Regex,
        kind: AnchorKind,
        keep: impl Fn(&regex::Captures<'_>) -> Option<String>,
    ) {
        let buf = std::mem::take(&mut self.buf);
        let mut spans = Vec::new();
        // Finding is fast; the groups are read only where something was found.
        for m in re.find_iter(&buf) {
            let text = re.captures_at(&buf, m.start()).and_then(|c| keep(&c));
            spans.push((m.start(), m.end(), text));
        }
        self.buf = buf;
        let mut blanks = Vec::with_capacity(spans.len());
        for (a, b, text) in spans {
            if let Some(text) = text {
                self.push(a, kind, &text);
            }
            blanks.push((a, b));
        }
        self.blank_all(&blanks);
    }
}
