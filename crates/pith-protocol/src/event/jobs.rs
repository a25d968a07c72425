//! Background jobs: commands the `bash` tool started with `background: true`, as `/ps` lists
//! them (ARCHITECTURE.md §5.3).

use serde::{Deserialize, Serialize};

/// One background job of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The session's number for it (1, 2, …), as `job_output` and `job_kill` take it.
    pub id: u32,
    /// The command line, as the model gave it.
    pub command: String,
    /// When it started (Unix milliseconds).
    pub started: i64,
    pub state: JobState,
    /// The last line it printed (one line, bounded; empty before any output).
    #[serde(default)]
    pub last_line: String,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    Running,
    /// It ended by itself: its exit code, or the signal that ended it.
    Exited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    /// `job_kill`, `/ps` or the session's end stopped it.
    Killed,
}

impl JobState {
    pub fn running(self) -> bool {
        self == JobState::Running
    }

    /// In words, for a list: `running`, `exited 0`, `killed by signal 9`, `killed`.
    pub fn describe(self) -> String {
        match self {
            JobState::Running => "running".to_string(),
            JobState::Exited {
                code: Some(code), ..
            } => format!("exited {code}"),
            JobState::Exited {
                signal: Some(sig), ..
            } => format!("ended by signal {sig}"),
            JobState::Exited { .. } => "exited".to_string(),
            JobState::Killed => "killed".to_string(),
        }
    }
}

/// A duration in milliseconds in words, to the minute past a minute: `12 s`, `3 min`,
/// `2 h 5 min`.
pub fn age(ms: i64) -> String {
    let secs = (ms.max(0) / 1000) as u64;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_reads_back_and_says_its_state() {
        let job = Job {
            id: 2,
            command: "npm run dev".into(),
            started: 1,
            state: JobState::Exited {
                code: Some(1),
                signal: None,
            },
            last_line: "bye".into(),
        };
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(
            json["state"],
            serde_json::json!({"state": "exited", "code": 1})
        );
        assert_eq!(serde_json::from_value::<Job>(json).unwrap(), job);
        assert_eq!(job.state.describe(), "exited 1");
        assert_eq!(JobState::Killed.describe(), "killed");
        assert!(JobState::Running.running());
        assert_eq!(
            [0, 59_999, 60_000, 3_599_999, 7_500_000].map(age),
            ["0 s", "59 s", "1 min", "59 min", "2 h 5 min"]
        );
    }
}
