//! One MCP tool as a pith tool: same permissions, truncation, pruning, interrupt and timeouts as
//! the built-in ones (the registry and the engine treat it like any other), and its result made
//! into text the model can use.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

use super::manager::{CallError, McpManager, Server};
use pith_protocol::tool::{McpFile, McpMetadata};
use pith_tools::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput};

/// A description longer than this is cut (some servers ship manuals in them).
pub(crate) const DESCRIPTION_MAX: usize = 4_000;

pub struct McpTool {
    manager: Arc<McpManager>,
    server: Arc<Server>,
    /// The name the model calls (`SERVER_TOOL`).
    name: String,
    /// The server's own name for it.
    remote: String,
    description: String,
    schema: Value,
}

impl McpTool {
    pub fn new(manager: Arc<McpManager>, server: Arc<Server>, tool: &rmcp::model::Tool) -> Self {
        let remote = tool.name.to_string();
        McpTool {
            name: super::names::tool_name(&server.name, &remote),
            description: describe(&server.name, tool),
            schema: schema(tool),
            remote,
            manager,
            server,
        }
    }

    pub fn server(&self) -> &str {
        &self.server.name
    }

    /// The server's name for the tool.
    pub fn remote(&self) -> &str {
        &self.remote
    }
}

/// The description sent to the model: the server's, cut at [`DESCRIPTION_MAX`], said to come
/// from the server.
fn describe(server: &str, tool: &rmcp::model::Tool) -> String {
    let text = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .or(tool.title.as_deref())
        .unwrap_or("(no description)");
    let mut text = text.to_string();
    if text.len() > DESCRIPTION_MAX {
        let mut cut = DESCRIPTION_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" …");
    }
    format!("{text}\n(MCP server {server})")
}

/// The input schema, as an object schema (some servers leave out `type` or `properties`).
fn schema(tool: &rmcp::model::Tool) -> Value {
    let mut schema = Value::Object((*tool.input_schema).clone());
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert_with(|| json!("object"));
        if map.get("type") == Some(&json!("object")) {
            map.entry("properties").or_insert_with(|| json!({}));
        }
    }
    schema
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = match input {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ToolError::Failed(format!(
                    "The arguments for {} must be a JSON object, got {other}",
                    self.name
                )));
            }
        };
        let result = self
            .manager
            .call(&self.server, &self.remote, arguments, &ctx.cancel)
            .await;
        match result {
            Ok(r) => render(&r, &self.server.name, &self.remote, &ctx.data_dir),
            Err(CallError::Cancelled) => Err(ToolError::Interrupted),
            Err(CallError::Failed(m)) => Err(ToolError::Failed(m)),
        }
    }
}

/// A call's result as a tool output: text as it is, images, audio and binary resources saved
/// beside the other saved outputs and named by path, resource links listed. An error result is
/// an `Err` (the model sees a tool error).
pub fn render(
    result: &CallToolResult,
    server: &str,
    tool: &str,
    data_dir: &Path,
) -> Result<ToolOutput, ToolError> {
    let mut files: Vec<McpFile> = Vec::new();
    let mut pieces: Vec<String> = result
        .content
        .iter()
        .map(|block| block_text(block, data_dir, &mut files))
        .collect();
    if pieces.is_empty()
        && let Some(structured) = &result.structured_content
    {
        pieces.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let text = pieces.join("\n\n");
    if result.is_error == Some(true) {
        return Err(ToolError::Failed(if text.trim().is_empty() {
            format!("{server}_{tool} failed (the server gave no message)")
        } else {
            text
        }));
    }
    let metadata = McpMetadata {
        mcp_server: server.to_string(),
        mcp_tool: tool.to_string(),
        files,
    }
    .into();
    Ok(ToolOutput {
        title: format!("{server}: {tool}"),
        output: if text.is_empty() {
            "(no output)".into()
        } else {
            text
        },
        metadata,
        meta: ToolMeta::default(),
    })
}

/// One content block as text: text as it is, media saved (into `files`) and named, a resource
/// link listed, an embedded resource shown or saved.
fn block_text(block: &ContentBlock, data_dir: &Path, files: &mut Vec<McpFile>) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => save_media("image", &i.data, &i.mime_type, data_dir, files),
        ContentBlock::Audio(a) => save_media("audio", &a.data, &a.mime_type, data_dir, files),
        ContentBlock::ResourceLink(r) => resource_link(r),
        ContentBlock::Resource(r) => embedded_resource(r, data_dir, files),
        // A content type this build does not know.
        #[allow(unreachable_patterns)]
        _ => "[content of a type pith does not show]".into(),
    }
}

/// `[resource link: NAME <URI> (MIME, SIZE) — DESCRIPTION]`.
fn resource_link(r: &rmcp::model::Resource) -> String {
    let mut line = format!("[resource link: {} <{}>", r.name, r.uri);
    let mut extra = Vec::new();
    if let Some(m) = &r.mime_type {
        extra.push(m.clone());
    }
    if let Some(size) = r.size {
        extra.push(pith_tools::truncate::human_bytes(size as usize));
    }
    if !extra.is_empty() {
        line.push_str(&format!(" ({})", extra.join(", ")));
    }
    if let Some(d) = r.description.as_deref().filter(|d| !d.trim().is_empty()) {
        line.push_str(&format!(" — {}", pith_protocol::text::one_line(d)));
    }
    line.push(']');
    line
}

/// An embedded resource: its text under its URI, or its blob saved and named.
fn embedded_resource(
    r: &rmcp::model::EmbeddedResource,
    data_dir: &Path,
    files: &mut Vec<McpFile>,
) -> String {
    match &r.resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
            let saved = save_media("resource", blob, mime, data_dir, files);
            format!("{saved} (from {uri})")
        }
        #[allow(unreachable_patterns)]
        _ => "[resource of a kind pith does not show]".into(),
    }
}

/// Saves base64 media under `<data_dir>/tool-output/` and says where.
fn save_media(
    kind: &str,
    data: &str,
    mime: &str,
    data_dir: &Path,
    files: &mut Vec<McpFile>,
) -> String {
    let bytes = match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
        Ok(b) => b,
        Err(_) => return format!("[{kind} ({mime}) that is not valid base64; not saved]"),
    };
    let ext = extension(mime);
    let dir = pith_tools::truncate::output_dir(data_dir);
    let path = dir.join(format!("mcp_{}.{ext}", ulid::Ulid::new()));
    let saved = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, &bytes));
    let size = pith_tools::truncate::human_bytes(bytes.len());
    match saved {
        Ok(()) => {
            files.push(McpFile {
                path: path.display().to_string(),
                mime: mime.to_string(),
                bytes: bytes.len(),
            });
            format!("[{kind}: {mime}, {size}, saved to {}]", path.display())
        }
        Err(e) => {
            tracing::warn!("cannot save an MCP {kind}: {e}");
            format!("[{kind}: {mime}, {size}; could not be saved: {e}]")
        }
    }
}

fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or("").trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        m if m.starts_with("text/") => "txt",
        _ => "bin",
    }
}

#[cfg(test)]
#[path = "tool_tests.rs"]
mod tests;
