//! Cheap fingerprints (FNV-1a) of what a part sends, so a cached count is reused until the
//! part changes.

use serde_json::Value;

use pith_protocol::message::{PartKind, ToolState};

pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

pub(super) fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mix(h: u64, v: u64) -> u64 {
    fnv(&v.to_le_bytes(), h)
}

/// A cheap fingerprint of what a part sends: its kind, its state and the lengths of its texts.
/// Streaming text only grows, and a tool changes state (pending → running → completed → pruned),
/// so length + state catches every change that alters the count.
pub(super) fn fingerprint(kind: &PartKind) -> u64 {
    let h = FNV_OFFSET;
    match kind {
        PartKind::Text { text, synthetic } => {
            mix(mix(mix(h, 1), text.len() as u64), *synthetic as u64)
        }
        PartKind::Reasoning { text, redacted, .. } => mix(
            mix(mix(h, 2), text.len() as u64),
            redacted.as_ref().map_or(0, |r| r.len() as u64),
        ),
        PartKind::Tool {
            tool, input, state, ..
        } => {
            let h = mix(mix(mix(h, 3), tool.len() as u64), json_shape(input));
            match state {
                ToolState::Pending => mix(h, 10),
                ToolState::Running { .. } => mix(h, 11),
                ToolState::Completed { output, time, .. } => mix(
                    mix(mix(h, 12), output.len() as u64),
                    time.compacted.is_some() as u64,
                ),
                ToolState::Error { message, .. } => mix(mix(h, 13), message.len() as u64),
            }
        }
        PartKind::Compaction(_) => mix(h, 4),
        PartKind::StepStart => mix(h, 5),
        PartKind::StepFinish { .. } => mix(h, 6),
        PartKind::File { path, mime } => mix(mix(mix(h, 7), path.len() as u64), mime.len() as u64),
        PartKind::Patch { files } => mix(mix(h, 8), files.len() as u64),
        PartKind::Pasted { spans } => mix(mix(h, 9), spans.len() as u64),
    }
}

/// A shallow shape of a JSON value: top-level keys and the lengths of their scalar values.
fn json_shape(v: &Value) -> u64 {
    let mut h = FNV_OFFSET;
    match v {
        Value::Object(map) => {
            h = mix(h, map.len() as u64);
            for (k, v) in map {
                h = fnv(k.as_bytes(), h);
                h = mix(
                    h,
                    match v {
                        Value::String(s) => s.len() as u64,
                        Value::Array(a) => a.len() as u64 + 1_000_000,
                        Value::Object(o) => o.len() as u64 + 2_000_000,
                        Value::Number(n) => n.as_f64().map_or(0, f64::to_bits),
                        Value::Bool(b) => *b as u64 + 3_000_000,
                        Value::Null => 4_000_000,
                    },
                );
            }
        }
        Value::String(s) => h = mix(h, s.len() as u64),
        Value::Array(a) => h = mix(h, a.len() as u64),
        _ => h = mix(h, 99),
    }
    h
}
