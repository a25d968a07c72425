//! "File not found", with the similarly named files that were meant.

use std::path::Path;

use crate::path::display_path;

/// "File not found", with similarly named files from the same directory.
pub(super) fn not_found(path: &Path, shown: &str, workspace: &Path) -> String {
    let mut msg = format!("File not found: {shown}");
    let Some(parent) = path.parent() else {
        return msg;
    };
    let Some(wanted) = path.file_name().map(|n| n.to_string_lossy().to_lowercase()) else {
        return msg;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        msg.push_str(&format!(
            " (the directory {} does not exist either)",
            display_path(parent, workspace)
        ));
        return msg;
    };
    let wanted_stem = wanted.split('.').next().unwrap_or(&wanted).to_string();
    let mut candidates: Vec<(usize, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let lower = name.to_lowercase();
            let stem = lower.split('.').next().unwrap_or(&lower).to_string();
            let dist = levenshtein(&lower, &wanted);
            let similar = dist <= 2
                || (!wanted_stem.is_empty() && stem == wanted_stem)
                || (wanted.len() >= 3 && lower.contains(&wanted))
                || (lower.len() >= 3 && wanted.contains(&lower));
            similar.then(|| (dist, display_path(&e.path(), workspace)))
        })
        .collect();
    candidates.sort();
    if !candidates.is_empty() {
        let list: Vec<String> = candidates.into_iter().take(5).map(|(_, p)| p).collect();
        msg.push_str(&format!(". Did you mean: {}?", list.join(", ")));
    }
    msg
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
