//! What each tool writes into a call's `metadata`, typed: the one definition of the stored keys
//! (in the order they are stored). [`ToolMetadata::read`] reads them back by the tool's name;
//! the tests beside it check that every form here is stored as before and reads back as itself.
//! Reading is lenient where earlier builds stored less: a key an older form lacks reads as its
//! default.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::todo::{Todo, lenient_list};

/// A key whose value is always `true` (`"image": true` marks an image read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marker;

impl Serialize for Marker {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Marker {
    /// Only `true` is a marker.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Marker, D::Error> {
        match bool::deserialize(d)? {
            true => Ok(Marker),
            false => Err(serde::de::Error::custom("a marker is true")),
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `bash`: the command and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BashMetadata {
    pub command: String,
    pub description: Option<String>,
    /// `None`: killed by a signal, timed out, or never started.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub interrupted: bool,
    pub sandboxed: bool,
    /// Stored only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub sandbox_denied: bool,
    /// The background job the call started (`background: true`), still running when the call
    /// returned; stored only when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<u32>,
}

/// `edit`: the file, how many occurrences it replaced, and the change as a unified diff.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EditMetadata {
    pub path: String,
    pub replacements: usize,
    pub diff: String,
}

/// `write`: the file, whether it was new, its size, and the change as a unified diff (`None`,
/// stored as `null`: a new file, or an old text that was not UTF-8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WriteMetadata {
    pub path: String,
    pub created: bool,
    pub bytes: usize,
    pub diff: Option<String>,
}

/// `read`: what it read, by kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ReadMetadata {
    /// An empty file.
    Empty {
        path: String,
        total_lines: usize,
        lines_shown: usize,
    },
    /// A page of a text file.
    Lines {
        path: String,
        offset: usize,
        lines_shown: usize,
        total_lines: usize,
        /// `total_lines` counts every line (false when counting stopped early).
        total_exact: bool,
        /// Lines after the page were left out.
        partial: bool,
        invalid_utf8: bool,
    },
    /// An image (its pixels are not text).
    Image {
        path: String,
        mime: String,
        size: u64,
        image: Marker,
    },
    /// A directory listing.
    Directory {
        path: String,
        directory: Marker,
        entries: usize,
    },
}

/// Every key a read's metadata has been stored with, by any build.
#[derive(Deserialize)]
struct StoredRead {
    #[serde(default)]
    path: String,
    offset: Option<usize>,
    lines_shown: Option<usize>,
    total_lines: Option<usize>,
    total_exact: Option<bool>,
    partial: Option<bool>,
    invalid_utf8: Option<bool>,
    mime: Option<String>,
    size: Option<u64>,
    image: Option<bool>,
    directory: Option<bool>,
    entries: Option<usize>,
}

impl<'de> Deserialize<'de> for ReadMetadata {
    /// By its markers (`directory`, `image`), then by what a page of lines has (`offset` and
    /// the flags); a form with only the line counts is an empty file's. Keys an earlier build
    /// did not store read as their defaults.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ReadMetadata, D::Error> {
        let r = StoredRead::deserialize(d)?;
        let path = r.path;
        if r.directory == Some(true) {
            return Ok(ReadMetadata::Directory {
                path,
                directory: Marker,
                entries: r.entries.unwrap_or(0),
            });
        }
        if r.image == Some(true) {
            return Ok(ReadMetadata::Image {
                path,
                mime: r.mime.unwrap_or_default(),
                size: r.size.unwrap_or(0),
                image: Marker,
            });
        }
        let page = [r.total_exact, r.partial, r.invalid_utf8];
        if r.offset.is_some() || page.iter().any(Option::is_some) {
            return Ok(ReadMetadata::Lines {
                path,
                offset: r.offset.unwrap_or(1),
                lines_shown: r.lines_shown.unwrap_or(0),
                total_lines: r.total_lines.unwrap_or(0),
                total_exact: r.total_exact.unwrap_or(true),
                partial: r.partial.unwrap_or(false),
                invalid_utf8: r.invalid_utf8.unwrap_or(false),
            });
        }
        match (r.lines_shown, r.total_lines) {
            (None, None) => Err(serde::de::Error::custom("no read metadata")),
            (shown, total) => Ok(ReadMetadata::Empty {
                path,
                total_lines: total.unwrap_or(0),
                lines_shown: shown.unwrap_or(0),
            }),
        }
    }
}

impl ReadMetadata {
    /// An empty file's.
    pub fn empty(path: String) -> ReadMetadata {
        ReadMetadata::Empty {
            path,
            total_lines: 0,
            lines_shown: 0,
        }
    }
}

/// `grep`: how many lines matched, in how many files, whether the listing was cut, and how many
/// protected (`.env`) files it skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GrepMetadata {
    pub matches: usize,
    pub files: usize,
    pub capped: bool,
    pub protected: usize,
}

/// `glob`, `list`: how many entries, and whether the listing was cut.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CountMetadata {
    pub count: usize,
    pub capped: bool,
}

impl CountMetadata {
    /// `count` entries, of which a listing shows at most `limit`.
    pub fn of(count: usize, limit: usize) -> CountMetadata {
        CountMetadata {
            count,
            capped: count > limit,
        }
    }
}

/// `todowrite`: the list as it set it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoMetadata {
    #[serde(deserialize_with = "lenient_list")]
    pub todos: Vec<Todo>,
}

/// `webfetch`: the address fetched (after redirects) and the HTTP status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FetchMetadata {
    pub url: String,
    pub status: u16,
}

/// `websearch`: what was searched, where (`backend`: `searxng`, `brave`, `tavily`, or the
/// provider's hosted search as `hosted`), and the hits as titles and addresses (their snippets
/// are in the output).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchMetadata {
    pub query: String,
    pub backend: String,
    pub hits: Vec<SearchHit>,
}

/// One hit of a web search.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
}

/// `recall`: the id recalled and the tool whose output it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecallMetadata {
    pub recalled: String,
    pub tool: String,
}

/// `task`: the sub-agent's session (its id continues the agent), which agent ran, and what its
/// run spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    pub session_id: String,
    pub agent: String,
    /// Input and output tokens of the run's requests (its own sub-agents' included).
    pub tokens: u64,
    pub cost: f64,
}

/// A tool of an MCP server: which server and tool (as the server names it), and the files its
/// result carried (stored only when there are some).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpMetadata {
    pub mcp_server: String,
    pub mcp_tool: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<McpFile>,
}

/// An image, audio or binary resource of an MCP tool's result, saved beside the other saved
/// outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpFile {
    pub path: String,
    pub mime: String,
    pub bytes: usize,
}

/// `tool_search`: the MCP tools it loaded, by the names they are offered under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSearchMetadata {
    /// (A name stored otherwise than as a string is skipped when read.)
    #[serde(deserialize_with = "strings")]
    pub loaded: Vec<String>,
}

/// The strings of a stored array (other items skipped, as the loader always did).
fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let items = Vec::<Value>::deserialize(d)?;
    Ok(items
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s),
            _ => None,
        })
        .collect())
}

/// What the registry adds to a tool's metadata when it cut the output to a preview: that it did,
/// and where the whole output is saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedOutput {
    pub truncated: Marker,
    pub output_path: String,
}

impl SavedOutput {
    /// The output saved whole at `output_path`.
    pub fn at(output_path: String) -> SavedOutput {
        SavedOutput {
            truncated: Marker,
            output_path,
        }
    }

    /// Adds its keys to `metadata` when that is an object (any other is left as it is).
    pub fn add_to(self, metadata: &mut Value) {
        if let (Value::Object(map), Ok(Value::Object(keys))) =
            (metadata, serde_json::to_value(self))
        {
            map.extend(keys);
        }
    }
}

/// What a tool (a built-in one, `task`, `tool_search`, an MCP server's) writes into a call's
/// `metadata`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolMetadata {
    Bash(BashMetadata),
    Edit(EditMetadata),
    Write(WriteMetadata),
    Read(ReadMetadata),
    Grep(GrepMetadata),
    Count(CountMetadata),
    Todo(TodoMetadata),
    Fetch(FetchMetadata),
    Recall(RecallMetadata),
    Task(TaskMetadata),
    Mcp(McpMetadata),
    ToolSearch(ToolSearchMetadata),
    Search(SearchMetadata),
}

impl ToolMetadata {
    /// The JSON stored with the call.
    pub fn to_value(&self) -> Value {
        // Strings, numbers, booleans and a JSON value: nothing here fails to serialise.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

macro_rules! into_metadata {
    ($($form:ident => $variant:ident),* $(,)?) => {$(
        impl From<$form> for ToolMetadata {
            fn from(m: $form) -> ToolMetadata {
                ToolMetadata::$variant(m)
            }
        }
        impl From<$form> for Value {
            fn from(m: $form) -> Value {
                ToolMetadata::from(m).to_value()
            }
        }
    )*};
}

into_metadata! {
    BashMetadata => Bash,
    EditMetadata => Edit,
    WriteMetadata => Write,
    ReadMetadata => Read,
    GrepMetadata => Grep,
    CountMetadata => Count,
    TodoMetadata => Todo,
    FetchMetadata => Fetch,
    RecallMetadata => Recall,
    TaskMetadata => Task,
    McpMetadata => Mcp,
    ToolSearchMetadata => ToolSearch,
    SearchMetadata => Search,
}
