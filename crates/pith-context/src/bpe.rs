//! The BPE tables, counted from a compact form embedded in the binary (ARCHITECTURE.md §6.5).
//!
//! tiktoken-rs embeds its tables as text — one `base64(token) rank` line per token, 3.6 MB for
//! o200k and 1.6 MB for cl100k — and parses them with 300,000 base64 decodes. pith embeds the same
//! tokens as one length byte and the token's bytes each, in rank order (a token's rank is its
//! position): 1.6 MB and 0.7 MB, built by `assets/make_bpe.py` and checked token by token against
//! tiktoken-rs by the test below. The binary is 2.9 MB smaller, and a table is read without
//! decoding anything; it is still built only when an exact count is needed.
//!
//! Counting needs only a token's rank from its bytes. tiktoken's `CoreBPE` also builds a decoder
//! and a sorted copy of every token (200,000 allocations each, ~17 MiB and most of the build
//! time); [`Bpe`] keeps the embedded bytes where they are and finds a token through an
//! open-addressing index of its ranks (2.8 MB for o200k), and merges a piece exactly as
//! tiktoken's `encode_ordinary` does (the tests compare the counts).

use std::hash::Hasher;

use rustc_hash::FxHasher;
use tiktoken_rs::Rank;

static O200K: &[u8] = include_bytes!("../assets/o200k_base.bpe");
static CL100K: &[u8] = include_bytes!("../assets/cl100k_base.bpe");

/// cl100k's pre-tokeniser (tiktoken-rs exports o200k's, not this one).
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// o200k_base. `None` if the table is malformed.
pub fn o200k_base() -> Option<Bpe> {
    Bpe::new(O200K, tiktoken_rs::O200K_BASE_PAT_STR)
}

/// cl100k_base. `None` if the table is malformed.
pub fn cl100k_base() -> Option<Bpe> {
    Bpe::new(CL100K, CL100K_PATTERN)
}

/// A BPE that counts tokens: the embedded table, an index from a token's bytes to its rank, and
/// the pre-tokeniser.
pub struct Bpe {
    table: &'static [u8],
    /// Where the bytes of the token of each rank start in `table` (its length byte is before).
    starts: Vec<u32>,
    /// `rank + 1` of a token in the slot its hash leads to (or the next free one); 0 is empty.
    /// A power of two, at most half full.
    slots: Vec<u32>,
    regex: fancy_regex::Regex,
}

impl std::fmt::Debug for Bpe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bpe")
            .field("tokens", &self.starts.len())
            .finish()
    }
}

fn hash(bytes: &[u8]) -> usize {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish() as usize
}

impl Bpe {
    fn new(table: &'static [u8], pattern: &str) -> Option<Bpe> {
        let starts = starts(table)?;
        let size = (starts.len() * 2).next_power_of_two();
        let mut slots = vec![0u32; size];
        for (rank, &start) in starts.iter().enumerate() {
            let mut i = hash(token_at(table, start)) & (size - 1);
            while slots[i] != 0 {
                i = (i + 1) & (size - 1);
            }
            slots[i] = u32::try_from(rank + 1).ok()?;
        }
        Some(Bpe {
            table,
            starts,
            slots,
            regex: fancy_regex::Regex::new(pattern).ok()?,
        })
    }

    /// How many tokens the table holds.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the table holds no token.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The rank of the token that is exactly `bytes`.
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        let mask = self.slots.len() - 1;
        let mut i = hash(bytes) & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            let rank = slot - 1;
            if token_at(self.table, self.starts[rank as usize]) == bytes {
                return Some(rank);
            }
            i = (i + 1) & mask;
        }
    }

    /// The tokens of `text` without special tokens: `CoreBPE::encode_ordinary(text).len()`.
    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        for m in self.regex.find_iter(text) {
            // only a backtracking limit fails, which tiktoken would panic on; the pieces of
            // pith's segments are far below it
            let Ok(m) = m else { break };
            let piece = m.as_str().as_bytes();
            n += if self.rank(piece).is_some() {
                1
            } else {
                self.merged(piece)
            };
        }
        n
    }

    /// How many tokens a piece that is not one token merges into: tiktoken's `_byte_pair_merge`
    /// (the lowest-ranked adjacent pair first, the leftmost of equals), counting the parts.
    fn merged(&self, piece: &[u8]) -> usize {
        if piece.len() < 2 {
            return piece.len();
        }
        let pair = |parts: &[(usize, Rank)], i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
                    .unwrap_or(Rank::MAX)
            } else {
                Rank::MAX
            }
        };
        let mut parts: Vec<(usize, Rank)> = Vec::with_capacity(piece.len() + 1);
        let mut min = (Rank::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]).unwrap_or(Rank::MAX);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, Rank::MAX));
        parts.push((piece.len(), Rank::MAX));
        while min.0 != Rank::MAX {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = pair(&parts, i - 1);
            }
            parts[i].1 = pair(&parts, i);
            parts.remove(i + 1);
            min = (Rank::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts.len() - 1
    }
}

fn token_at(table: &[u8], start: u32) -> &[u8] {
    let start = start as usize;
    &table[start..start + usize::from(table[start - 1])]
}

/// Where each token of a compact table starts, in rank order; `None` if a length runs past the
/// end.
fn starts(table: &[u8]) -> Option<Vec<u32>> {
    let mut starts = Vec::with_capacity(table.len() / 6);
    let mut at = 0usize;
    while let Some(&len) = table.get(at) {
        let start = at + 1;
        table.get(start..start + usize::from(len))?;
        starts.push(u32::try_from(start).ok()?);
        at = start + usize::from(len);
    }
    Some(starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of many shapes: prose, code, numbers, CJK, emoji, whitespace runs, a long run of
    /// one character (a piece far longer than any token), base64-like noise.
    fn corpus() -> Vec<String> {
        let mut texts = vec![
            "Hello, wörld! fn main() { println!(\"{x:?}\"); } <|endoftext|> 12345 \u{1F600}\n\n  indented".to_string(),
            include_str!("tokens/encoding.rs").to_string(),
            include_str!("../../../README.md").chars().take(40_000).collect(),
            "上下文管理是这个编码代理的核心能力。它在压缩历史时必须保留用户给出的每一条指令、路径和标识符，".repeat(5),
            "Ünïcödé façade — naïve café; Ελληνικά; русский текст; عربى; हिन्दी".to_string(),
            "a".repeat(3_000),
            "    \t\t  \n\n\n   x  \r\n".repeat(20),
            "1234567890 3.14159 0xDEADBEEF 1e-9 -42".repeat(10),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let noise: String = (0..4_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n"
                        [(seed % 66) as usize],
                )
            })
            .collect();
        texts.push(noise);
        texts
    }

    fn same_as_tiktoken(table: &[u8], ours: Bpe, theirs: tiktoken_rs::CoreBPE, count: usize) {
        assert_eq!(ours.len(), count);
        let starts = starts(table).expect("the table parses");
        for (rank, &start) in starts.iter().enumerate() {
            let bytes = token_at(table, start);
            let rank = Rank::try_from(rank).unwrap();
            assert_eq!(
                &theirs
                    .decode_bytes(&[rank])
                    .expect("tiktoken knows the rank"),
                bytes
            );
            assert_eq!(ours.rank(bytes), Some(rank));
        }
        assert_eq!(ours.rank(b"not one token at all, surely"), None);
        for text in corpus() {
            assert_eq!(
                ours.count(&text),
                theirs.encode_ordinary(&text).len(),
                "{:?}",
                text.chars().take(60).collect::<String>()
            );
        }
    }

    #[test]
    fn the_compact_tables_count_as_tiktoken() {
        let o200k = tiktoken_rs::o200k_base().expect("tiktoken o200k");
        same_as_tiktoken(O200K, o200k_base().expect("ours"), o200k, 199_998);
        let cl100k = tiktoken_rs::cl100k_base().expect("tiktoken cl100k");
        same_as_tiktoken(CL100K, cl100k_base().expect("ours"), cl100k, 100_256);
    }

    #[test]
    fn a_truncated_table_is_refused() {
        assert!(starts(&[3, b'a', b'b']).is_none());
        assert_eq!(starts(&[1, b'a', 2, b'b', b'c']).map(|t| t.len()), Some(2));
    }
}
