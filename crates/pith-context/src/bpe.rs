//! The BPE tables, built from a compact form embedded in the binary (ARCHITECTURE.md §6.5).
//!
//! tiktoken-rs embeds its tables as text — one `base64(token) rank` line per token, 3.6 MB for
//! o200k and 1.6 MB for cl100k — and parses them with 300,000 base64 decodes. pith embeds the same
//! tokens as one length byte and the token's bytes each, in rank order (a token's rank is its
//! position): 1.6 MB and 0.7 MB, built by `assets/make_bpe.py` and checked token by token against
//! tiktoken-rs by the test below. The binary is 2.9 MB smaller, and a table is read without
//! decoding anything; it is still built only when an exact count is needed.

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, ENDOFPROMPT, ENDOFTEXT, FIM_MIDDLE, FIM_PREFIX, FIM_SUFFIX, Rank};

static O200K: &[u8] = include_bytes!("../assets/o200k_base.bpe");
static CL100K: &[u8] = include_bytes!("../assets/cl100k_base.bpe");

/// cl100k's pre-tokeniser (tiktoken-rs exports o200k's, not this one).
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// o200k_base, as tiktoken-rs's `o200k_base()` builds it. `None` if the table is malformed.
pub fn o200k_base() -> Option<CoreBPE> {
    build(
        O200K,
        &[(ENDOFTEXT, 199_999), (ENDOFPROMPT, 200_018)],
        tiktoken_rs::O200K_BASE_PAT_STR,
    )
}

/// cl100k_base, as tiktoken-rs's `cl100k_base()` builds it. `None` if the table is malformed.
pub fn cl100k_base() -> Option<CoreBPE> {
    build(
        CL100K,
        &[
            (ENDOFTEXT, 100_257),
            (FIM_PREFIX, 100_258),
            (FIM_MIDDLE, 100_259),
            (FIM_SUFFIX, 100_260),
            (ENDOFPROMPT, 100_276),
        ],
        CL100K_PATTERN,
    )
}

fn build(table: &[u8], specials: &[(&str, Rank)], pattern: &str) -> Option<CoreBPE> {
    let encoder = tokens(table)?;
    let specials = specials.iter().map(|(s, r)| (s.to_string(), *r)).collect();
    CoreBPE::new(encoder, specials, pattern).ok()
}

/// The tokens of a compact table with their ranks; `None` if a length runs past the end.
fn tokens(mut table: &[u8]) -> Option<FxHashMap<Vec<u8>, Rank>> {
    let mut encoder = FxHashMap::default();
    let mut rank: Rank = 0;
    while let Some((&len, rest)) = table.split_first() {
        let token = rest.get(..usize::from(len))?;
        encoder.insert(token.to_vec(), rank);
        table = &rest[token.len()..];
        rank += 1;
    }
    Some(encoder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_tiktoken(table: &[u8], ours: CoreBPE, theirs: CoreBPE, count: usize) {
        let tokens = tokens(table).expect("the table parses");
        assert_eq!(tokens.len(), count);
        for (bytes, rank) in &tokens {
            assert_eq!(
                &theirs
                    .decode_bytes(&[*rank])
                    .expect("tiktoken knows the rank"),
                bytes
            );
        }
        let text = "Hello, wörld! fn main() { println!(\"{x:?}\"); } <|endoftext|> 12345 \u{1F600}\n\n  indented";
        assert_eq!(
            ours.encode_with_special_tokens(text),
            theirs.encode_with_special_tokens(text)
        );
        assert_eq!(ours.encode_ordinary(text), theirs.encode_ordinary(text));
    }

    #[test]
    fn the_compact_tables_are_tiktokens() {
        let o200k = tiktoken_rs::o200k_base().expect("tiktoken o200k");
        same_as_tiktoken(O200K, o200k_base().expect("ours"), o200k, 199_998);
        let cl100k = tiktoken_rs::cl100k_base().expect("tiktoken cl100k");
        same_as_tiktoken(CL100K, cl100k_base().expect("ours"), cl100k, 100_256);
    }

    #[test]
    fn a_truncated_table_is_refused() {
        assert!(tokens(&[3, b'a', b'b']).is_none());
        assert_eq!(tokens(&[1, b'a', 2, b'b', b'c']).map(|t| t.len()), Some(2));
    }
}
