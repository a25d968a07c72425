//! `read` of a directory: its entries, a page of them.

use std::path::Path;

use pith_protocol::tool::{Marker, ReadMetadata};

use super::lossy;
use crate::{ToolError, ToolMeta, ToolOutput};

/// Lists `listed` (the opened directory) as `path`.
pub(super) fn read_dir(
    listed: &Path,
    path: &Path,
    shown: &str,
    offset: usize,
    limit: usize,
) -> Result<ToolOutput, ToolError> {
    let entries = std::fs::read_dir(listed).map_err(|e| tool_err!("Cannot list {shown}: {e}"))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false)
                || listed.join(e.file_name()).is_dir()
            {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    let total = names.len();
    let page: Vec<&String> = names.iter().skip(offset - 1).take(limit).collect();
    let mut out = format!("{shown} is a directory with {total} entries:\n");
    for n in &page {
        out.push_str(n);
        out.push('\n');
    }
    if offset - 1 + page.len() < total {
        out.push_str(&format!(
            "(Showing entries {offset}-{} of {total}. Use offset={} to see more.)\n",
            offset - 1 + page.len(),
            offset + page.len()
        ));
    }
    Ok(ToolOutput {
        title: shown.to_string(),
        output: out,
        metadata: ReadMetadata::Directory {
            path: lossy(path),
            directory: Marker,
            entries: total,
        }
        .into(),
        meta: ToolMeta::paged(),
    })
}
