//! The client's file system as the tools' editor (`tools::editor`): when the client offers
//! `fs.readTextFile` / `fs.writeTextFile`, `read`, `write` and `edit` read and write through
//! `fs/read_text_file` and `fs/write_text_file`, so they see and change the editor's open
//! buffers. The tools keep every decision (ARCHITECTURE.md §7.1); bounds and fallbacks are
//! theirs too.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    FileSystemCapabilities, ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest,
};

use super::rpc::Connection;
use pith_tools::editor::{EditorError, EditorFiles};

pub(crate) struct ClientFiles {
    conn: Arc<Connection>,
    session_id: String,
    read: bool,
    write: bool,
}

impl ClientFiles {
    /// The client's files for session `session_id`, or `None` when it offers neither.
    pub(crate) fn offered(
        conn: Arc<Connection>,
        session_id: &str,
        fs: &FileSystemCapabilities,
    ) -> Option<Arc<dyn EditorFiles>> {
        (fs.read_text_file || fs.write_text_file).then(|| {
            Arc::new(ClientFiles {
                conn,
                session_id: session_id.to_string(),
                read: fs.read_text_file,
                write: fs.write_text_file,
            }) as Arc<dyn EditorFiles>
        })
    }
}

#[async_trait::async_trait]
impl EditorFiles for ClientFiles {
    fn reads(&self) -> bool {
        self.read
    }

    fn writes(&self) -> bool {
        self.write
    }

    async fn read_text(&self, path: &Path) -> Result<String, EditorError> {
        let params = ReadTextFileRequest::new(self.session_id.clone(), path);
        let answer = self
            .conn
            .request("fs/read_text_file", params)
            .await
            .map_err(|e| EditorError::Refused(e.message))?;
        serde_json::from_value::<ReadTextFileResponse>(answer)
            .map(|r| r.content)
            .map_err(EditorError::Unreadable)
    }

    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError> {
        let params = WriteTextFileRequest::new(self.session_id.clone(), path, content);
        self.conn
            .request("fs/write_text_file", params)
            .await
            .map(|_| ())
            .map_err(|e| EditorError::Refused(e.message))
    }
}
