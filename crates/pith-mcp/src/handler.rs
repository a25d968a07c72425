//! pith's side of the protocol (`ClientHandler`): roots, log messages, list changes, and a
//! server's questions (elicitation, sampling) handed to the engine (`crate::questions`).

// Roots and logging are deprecated by a newer protocol revision, yet servers of the session
// protocol pith speaks still ask for roots and send log messages.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability,
    Implementation, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    ProtocolVersion, RootsCapabilities, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};

/// What a server's notifications ask of the manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    Tools,
    Prompts,
    Resources,
}

/// pith's side of the protocol: answers roots with the workspace, logs the server's log
/// messages, reports list changes, and hands a server's questions (elicitation, sampling) to
/// `questions` (none: neither is offered).
#[derive(Clone)]
pub struct Handler {
    pub server: String,
    pub workspace: String,
    pub(crate) on_change: Arc<dyn Fn(Changed) + Send + Sync>,
    pub(crate) questions: Option<Arc<dyn crate::questions::ServerQuestions>>,
    pub(crate) pace: Arc<Mutex<crate::questions::Pace>>,
}

impl ClientHandler for Handler {
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let mut root = rmcp::model::Root::new(format!("file://{}", self.workspace));
        root.name = Some("workspace".into());
        Ok(ListRootsResult::new(vec![root]))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = pith_protocol::text::one_line(&params.data.to_string());
        match params.level {
            LoggingLevel::Debug => tracing::debug!(server = %self.server, "mcp log: {data}"),
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(server = %self.server, "mcp log: {data}")
            }
            _ => tracing::warn!(server = %self.server, "mcp log: {data}"),
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.on_change)(Changed::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.on_change)(Changed::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        (self.on_change)(Changed::Resources);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(crate::questions::elicit(
            &self.server,
            self.questions.as_ref(),
            &self.pace,
            request,
            context.ct.clone(),
        )
        .await)
    }

    /// A request the SDK could not read into its types. An `elicitation/create` whose form is
    /// not one MCP allows lands here: it is declined with a note, as pith's own reading of a
    /// form declines it, rather than answered "method not found".
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        if request.method != "elicitation/create" {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let parsed = crate::questions::form_of_raw(request.params.as_ref());
        let result = crate::questions::elicit_form(
            &self.server,
            self.questions.as_ref(),
            &self.pace,
            parsed,
            context.ct.clone(),
        )
        .await;
        let value = serde_json::to_value(result).unwrap_or_default();
        Ok(rmcp::model::CustomResult::new(value))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(questions) = self.questions.as_ref().filter(|q| q.samples()) else {
            return Err(ErrorData::invalid_request("pith does not sample", None));
        };
        let request = crate::questions::read_sampling(&params)
            .map_err(|why| ErrorData::invalid_params(why, None))?;
        let _hold = crate::questions::SampleHold::new(&self.pace);
        questions
            .sample(&self.server, request, context.ct.clone())
            .await
            .map(crate::questions::sampling_result)
            .map_err(|why| ErrorData::invalid_request(why, None))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        if let Some(questions) = &self.questions {
            capabilities.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::new().with_schema_validation(true)),
            );
            if questions.samples() {
                capabilities.sampling = Some(SamplingCapability::default());
            }
        }
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("pith", env!("CARGO_PKG_VERSION")),
        );
        // The handshake of sessions: servers of every version answer it, and list changes
        // arrive as plain notifications.
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }
}
