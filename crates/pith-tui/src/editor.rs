//! The composer in an external editor (Ctrl+G or `/editor`): `$VISUAL`, then `$EDITOR`, else
//! `vi`, run on a temporary file holding the composer's text (pasted chips expanded). The TUI
//! leaves the terminal to it while it runs; what it saved comes back into the composer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The editor's command line: `$VISUAL`, then `$EDITOR`, else `vi`, split as a shell would
/// (`code -w`, `"/opt/my editor/bin/ed" --wait`).
pub fn editor_command(
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ExternalEditorError> {
    let (name, line) = ["VISUAL", "EDITOR"]
        .into_iter()
        .find_map(|v| env(v).filter(|s| !s.trim().is_empty()).map(|s| (v, s)))
        .unwrap_or(("default", "vi".to_string()));
    match shlex::split(&line) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(ExternalEditorError::Unsplittable { var: name, line }),
    }
}

/// Why the editor gave nothing back.
#[derive(Debug, thiserror::Error)]
pub enum ExternalEditorError {
    /// `$VISUAL` or `$EDITOR` holds no command line (an unclosed quote).
    #[error("${var} is not a command line pith can split: {line:?}")]
    Unsplittable { var: &'static str, line: String },
    #[error("no editor command")]
    NoCommand,
    #[error("cannot write a temporary file: {0}")]
    TempFile(std::io::Error),
    #[error("cannot run the editor {program:?}: {error}")]
    Run {
        program: String,
        error: std::io::Error,
    },
    #[error("the editor {program:?} exited with {status}; the composer is unchanged")]
    Failed {
        program: String,
        status: std::process::ExitStatus,
    },
    #[error("cannot read back the edited text: {0}")]
    ReadBack(std::io::Error),
}

/// A temporary file of its own for the text, readable by the user only.
fn temp_file(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    let path = dir.join(format!(
        "pith-prompt-{}.md",
        pith_protocol::message::new_id()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&path)?.write_all(text.as_bytes())?;
    Ok(path)
}

/// Runs `command` on a temporary file (in `dir`) holding `text` and returns what the editor
/// left in it (one trailing newline, which editors add, taken off). The file is removed.
pub fn edit_in(dir: &Path, command: &[String], text: &str) -> Result<String, ExternalEditorError> {
    let (program, args) = command
        .split_first()
        .ok_or(ExternalEditorError::NoCommand)?;
    let path = temp_file(dir, text).map_err(ExternalEditorError::TempFile)?;
    let status = Command::new(program).args(args).arg(&path).status();
    let result = match status {
        Err(error) => Err(ExternalEditorError::Run {
            program: program.clone(),
            error,
        }),
        Ok(status) if !status.success() => Err(ExternalEditorError::Failed {
            program: program.clone(),
            status,
        }),
        Ok(_) => std::fs::read_to_string(&path)
            .map(|t| t.strip_suffix('\n').unwrap_or(&t).to_string())
            .map_err(ExternalEditorError::ReadBack),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// Runs `command` on the file at `path` (a memory file the user chose; the editor makes it
/// when it is missing).
pub fn edit_file(command: &[String], path: &Path) -> Result<(), ExternalEditorError> {
    let (program, args) = command
        .split_first()
        .ok_or(ExternalEditorError::NoCommand)?;
    match Command::new(program).args(args).arg(path).status() {
        Err(error) => Err(ExternalEditorError::Run {
            program: program.clone(),
            error,
        }),
        Ok(status) if !status.success() => Err(ExternalEditorError::Failed {
            program: program.clone(),
            status,
        }),
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_command_prefers_visual_and_splits_arguments() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            editor_command(env(&[("VISUAL", "code -w"), ("EDITOR", "nano")])).unwrap(),
            ["code", "-w"]
        );
        assert_eq!(
            editor_command(env(&[
                ("VISUAL", " "),
                ("EDITOR", "'/opt/my ed/ed' --wait")
            ]))
            .unwrap(),
            ["/opt/my ed/ed", "--wait"]
        );
        assert_eq!(editor_command(env(&[])).unwrap(), ["vi"]);
        let err = editor_command(env(&[("EDITOR", "vim 'unclosed")])).unwrap_err();
        assert!(err.to_string().contains("$EDITOR"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fake_editor_edits_the_text() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fake-editor");
        // appends a line after its first argument's text; the file comes last
        std::fs::write(&script, "#!/bin/sh\nprintf '%s\\n' \"$1\" >> \"$2\"\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cmd = vec![script.display().to_string(), "added by editor".to_string()];
        let out = edit_in(dir.path(), &cmd, "first line\n").unwrap();
        assert_eq!(out, "first line\nadded by editor");
        // the temporary file is gone
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("pith-prompt-"))
            .collect();
        assert!(left.is_empty());
        // a failing editor leaves the text alone
        let fail = vec!["false".to_string()];
        assert!(
            edit_in(dir.path(), &fail, "x")
                .unwrap_err()
                .to_string()
                .contains("unchanged")
        );
    }
}
