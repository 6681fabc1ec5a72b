//! Payloads at rest. New rows are LZ4 blocks (lz4_flex, safe Rust), which
//! inflate several times faster than zlib, so a cache hit is close to a
//! plain read; rows written before it are zlib (flate2's pure-Rust backend)
//! and are still read: the row's `codec` column says which. Large payloads
//! are (de)compressed on the blocking pool so a 24 MB walk does not stall
//! the runtime. Reading back checks the length written beside the payload,
//! and never inflates past it, so a damaged row is an error, not a surprise.

use std::io::Read;

use flate2::read::ZlibDecoder;

use crate::error::{Error, Result};

/// Above this many bytes the work moves to the blocking pool.
const INLINE_LIMIT: usize = 256 * 1024;
/// Up to this many bytes a payload is written as one run of literals
/// ([`literal_block`]): still an LZ4 block, read like any other, but
/// without the match table the compressor allocates and clears for every
/// block, which cost more than the rest of a branch's step row. Text this
/// short barely shrinks anyway.
const LITERAL_LIMIT: usize = 256;

/// How a stored payload is compressed (the `codec` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// What every new row is written with.
    Lz4,
    /// Rows written before the `codec` column existed.
    Zlib,
}

impl Codec {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Codec::Lz4 => "lz4",
            Codec::Zlib => "zlib",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Codec> {
        match name {
            "lz4" => Some(Codec::Lz4),
            "zlib" => Some(Codec::Zlib),
            _ => None,
        }
    }
}

/// Compresses `payload` with `Codec::Lz4`. It is taken whole (a step's
/// shared output, an owned buffer) so a large one moves to the blocking
/// pool without being copied first.
pub(crate) async fn compress<T: AsRef<[u8]> + Send + 'static>(payload: T) -> Result<Vec<u8>> {
    if payload.as_ref().len() <= LITERAL_LIMIT {
        return Ok(literal_block(payload.as_ref()));
    }
    if payload.as_ref().len() <= INLINE_LIMIT {
        return Ok(lz4_flex::block::compress(payload.as_ref()));
    }
    tokio::task::spawn_blocking(move || lz4_flex::block::compress(payload.as_ref()))
        .await
        .map_err(|_| Error::Background)
}

/// `payload` as an LZ4 block of one sequence holding only literals: a
/// token whose high four bits count them (15: more follows, in bytes of
/// 255 and a last one below 255), then the bytes themselves. The LZ4
/// block format ends every block with such a sequence.
fn literal_block(payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut block = Vec::with_capacity(len + 2 + len / 255);
    block.push((len.min(15) as u8) << 4);
    if len >= 15 {
        let mut rest = len - 15;
        while rest >= 255 {
            block.push(255);
            rest -= 255;
        }
        block.push(rest as u8);
    }
    block.extend_from_slice(payload);
    block
}

/// Decompresses what `codec` wrote; it must come to exactly `len` bytes.
/// `tool` names the row in the error.
pub(crate) async fn decompress(
    stored: Vec<u8>,
    len: u64,
    codec: Codec,
    tool: &str,
) -> Result<Vec<u8>> {
    let result = if stored.len() <= INLINE_LIMIT / 8 && len <= INLINE_LIMIT as u64 {
        decompress_now(&stored, len, codec)
    } else {
        tokio::task::spawn_blocking(move || decompress_now(&stored, len, codec))
            .await
            .map_err(|_| Error::Background)?
    };
    result.map_err(|reason| Error::CorruptEntry {
        tool: tool.to_string(),
        reason,
    })
}

fn decompress_now(
    stored: &[u8],
    len: u64,
    codec: Codec,
) -> std::result::Result<Vec<u8>, &'static str> {
    match codec {
        Codec::Zlib => inflate_zlib(stored, len),
        Codec::Lz4 => {
            let len = usize::try_from(len).map_err(|_| "its length does not fit in memory")?;
            // The block decoder writes at most `len` bytes and fails on more.
            let out =
                lz4_flex::block::decompress(stored, len).map_err(|_| "it does not decompress")?;
            match out.len() == len {
                true => Ok(out),
                false => Err("its length differs from the one written"),
            }
        }
    }
}

/// Compresses `payload` with zlib, as rows were before LZ4 (tests of old rows).
#[cfg(any(test, feature = "testing"))]
pub(crate) fn compress_zlib(payload: &[u8]) -> Result<Vec<u8>> {
    use flate2::write::ZlibEncoder;
    use flate2::Compression;
    use std::io::Write;

    let mut encoder = ZlibEncoder::new(
        Vec::with_capacity(payload.len() / 4 + 64),
        Compression::fast(),
    );
    encoder
        .write_all(payload)
        .map_err(|source| Error::Compress { source })?;
    encoder
        .finish()
        .map_err(|source| Error::Compress { source })
}

fn inflate_zlib(stored: &[u8], len: u64) -> std::result::Result<Vec<u8>, &'static str> {
    let capacity = usize::try_from(len).map_err(|_| "its length does not fit in memory")?;
    let mut out = Vec::with_capacity(capacity);
    // One byte past the expected length tells a longer stream apart.
    let limit = len.saturating_add(1);
    ZlibDecoder::new(stored)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|_| "it does not decompress")?;
    if out.len() as u64 != len {
        return Err("its length differs from the one written");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize) -> Vec<u8> {
        let row = br#"{"id":1234,"customer":{"name":"Ada"},"total":"12.50"},"#;
        row.iter().copied().cycle().take(len).collect()
    }

    async fn stored(payload: &[u8], codec: Codec) -> Vec<u8> {
        match codec {
            Codec::Lz4 => compress(payload.to_vec()).await.unwrap_or_default(),
            Codec::Zlib => compress_zlib(payload).unwrap_or_default(),
        }
    }

    #[test]
    fn literal_blocks_are_read_by_the_lz4_decoder_at_every_length() {
        // Around each length where the count takes one more byte.
        for len in (0..=LITERAL_LIMIT).chain([269, 270, 524, 525, 1000]) {
            let payload = sample(len);
            let block = literal_block(&payload);
            assert_eq!(
                lz4_flex::block::decompress(&block, len).ok(),
                Some(payload.clone()),
                "{len} bytes"
            );
            assert_eq!(decompress_now(&block, len as u64, Codec::Lz4), Ok(payload));
        }
    }

    #[tokio::test]
    async fn payloads_round_trip_small_and_large_with_either_codec() {
        for codec in [Codec::Lz4, Codec::Zlib] {
            for len in [
                0,
                1,
                LITERAL_LIMIT,
                LITERAL_LIMIT + 1,
                1000,
                INLINE_LIMIT + 1,
                3 * 1024 * 1024,
            ] {
                let payload = sample(len);
                let stored = stored(&payload, codec).await;
                assert!(len < 1000 || stored.len() < payload.len() / 4, "{codec:?}");
                let back = decompress(stored, len as u64, codec, "t")
                    .await
                    .unwrap_or_default();
                assert_eq!(back, payload, "{codec:?}");
            }
        }
        assert_eq!(Codec::parse(Codec::Lz4.as_str()), Some(Codec::Lz4));
        assert_eq!(Codec::parse(Codec::Zlib.as_str()), Some(Codec::Zlib));
        assert_eq!(Codec::parse("zstd"), None);
    }

    #[tokio::test]
    async fn damaged_rows_are_errors() {
        for codec in [Codec::Lz4, Codec::Zlib] {
            let payload = sample(5000);
            let stored = stored(&payload, codec).await;
            assert!(decompress(stored.clone(), 4999, codec, "t").await.is_err());
            assert!(decompress(stored.clone(), 5001, codec, "t").await.is_err());
            assert!(decompress(b"not packed".to_vec(), 8, codec, "t")
                .await
                .is_err());
            let mut cut = stored;
            cut.truncate(cut.len() / 2);
            let err = decompress(cut, 5000, codec, "shop.listOrders").await.err();
            let text = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                text.contains("shop.listOrders") && text.contains("corrupt"),
                "{codec:?}: {text}"
            );
        }
    }
}
