//! The one [`EngineOptions`] a front end starts its engine with: what differs between the TUI,
//! `pith run` and an editor is said by [`FrontEnd`], and nothing else is written out per front
//! end.

use std::path::Path;
use std::sync::Arc;

use pith_config::Config;
use pith_config::mcp::McpServerConfig;
use pith_engine::EngineOptions;
use pith_protocol::event::PermissionMode;
use pith_tools::editor::EditorFiles;

use crate::setup::Setup;

/// The front end an engine runs for, with what it decides about the engine.
pub enum FrontEnd {
    /// The TUI: someone answers the questions; the empty sessions left behind are removed.
    Tui,
    /// `pith run`: no one answers (`ask` is a refusal unless `--yes`).
    Headless {
        auto_yes: bool,
        allow_unsandboxed: bool,
    },
    /// An editor over ACP: the mode it chose, the MCP servers it adds to the configuration and
    /// the files it holds (`None`: the disk). It keeps empty sessions: it may load one later.
    Editor {
        auto_yes: bool,
        mode: PermissionMode,
        mcp: Vec<(String, McpServerConfig)>,
        files: Option<Arc<dyn EditorFiles>>,
    },
}

impl Setup {
    /// The engine's options for `front` over this workspace and configuration.
    pub fn engine_options(&self, front: FrontEnd) -> EngineOptions {
        let mut opts = options(self.config(), &self.workspace, &self.data_dir, front);
        opts.skills = std::sync::Arc::new(self.skills());
        opts
    }
}

fn options(config: &Config, workspace: &Path, data_dir: &Path, front: FrontEnd) -> EngineOptions {
    let mut opts = EngineOptions {
        config: config.clone(),
        workspace: workspace.to_path_buf(),
        data_dir: data_dir.to_path_buf(),
        headless: false,
        auto_yes: false,
        allow_unsandboxed: false,
        editor: None,
        remove_empty_sessions: false,
        user_dirs: pith_engine::prompt::UserDirs::from_env(),
        skills: Default::default(),
    };
    match front {
        FrontEnd::Tui => opts.remove_empty_sessions = true,
        FrontEnd::Headless {
            auto_yes,
            allow_unsandboxed,
        } => {
            opts.headless = true;
            opts.auto_yes = auto_yes;
            opts.allow_unsandboxed = allow_unsandboxed;
        }
        FrontEnd::Editor {
            auto_yes,
            mode,
            mcp,
            files,
        } => {
            opts.config.permission_mode = mode;
            opts.config.mcp.extend(mcp);
            opts.auto_yes = auto_yes;
            // bash never runs in the client's terminal: pith's sandbox wraps it (§7.1)
            opts.editor = files;
        }
    }
    opts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(front: FrontEnd) -> EngineOptions {
        options(&Config::default(), Path::new("/w"), Path::new("/d"), front)
    }

    #[test]
    fn each_front_end_gets_what_it_decides_and_nothing_else() {
        let tui = of(FrontEnd::Tui);
        assert!(tui.remove_empty_sessions && !tui.headless && !tui.auto_yes);
        let run = of(FrontEnd::Headless {
            auto_yes: true,
            allow_unsandboxed: true,
        });
        assert!(run.headless && run.auto_yes && run.allow_unsandboxed);
        assert!(!run.remove_empty_sessions);
        let server = McpServerConfig {
            command: Some("srv".into()),
            ..McpServerConfig::default()
        };
        let editor = of(FrontEnd::Editor {
            auto_yes: false,
            mode: PermissionMode::Plan,
            mcp: vec![("client".into(), server)],
            files: None,
        });
        assert!(!editor.headless && !editor.remove_empty_sessions && !editor.allow_unsandboxed);
        assert_eq!(editor.config.permission_mode, PermissionMode::Plan);
        assert!(editor.config.mcp.contains_key("client"));
        assert_eq!(
            (editor.workspace.as_path(), editor.data_dir.as_path()),
            (Path::new("/w"), Path::new("/d"))
        );
    }
}
