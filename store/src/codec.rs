//! Cache payloads at rest: zlib (flate2's pure-Rust backend). Large payloads
//! are (de)compressed on the blocking pool so a 24 MB walk does not stall
//! the runtime. Reading back checks the length written beside the payload,
//! and never inflates past it, so a damaged row is an error, not a surprise.

use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;

use crate::error::{Error, Result};

/// Above this many bytes the work moves to the blocking pool.
const INLINE_LIMIT: usize = 256 * 1024;

/// Compresses `payload`.
pub(crate) async fn compress(payload: &[u8]) -> Result<Vec<u8>> {
    if payload.len() <= INLINE_LIMIT {
        return compress_now(payload);
    }
    let owned = payload.to_vec();
    tokio::task::spawn_blocking(move || compress_now(&owned))
        .await
        .map_err(|_| Error::Background)?
}

/// Decompresses what `compress` wrote; it must come to exactly `len` bytes.
pub(crate) async fn decompress(stored: Vec<u8>, len: u64, tool: &str) -> Result<Vec<u8>> {
    let result = if stored.len() <= INLINE_LIMIT / 8 && len <= INLINE_LIMIT as u64 {
        decompress_now(&stored, len)
    } else {
        tokio::task::spawn_blocking(move || decompress_now(&stored, len))
            .await
            .map_err(|_| Error::Background)?
    };
    result.map_err(|reason| Error::CorruptEntry {
        tool: tool.to_string(),
        reason,
    })
}

fn compress_now(payload: &[u8]) -> Result<Vec<u8>> {
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

fn decompress_now(stored: &[u8], len: u64) -> std::result::Result<Vec<u8>, &'static str> {
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

    #[tokio::test]
    async fn payloads_round_trip_small_and_large() {
        for len in [0, 1, 1000, INLINE_LIMIT + 1, 3 * 1024 * 1024] {
            let payload = sample(len);
            let stored = compress(&payload).await.unwrap_or_default();
            assert!(len < 1000 || stored.len() < payload.len() / 4);
            let back = decompress(stored, len as u64, "t")
                .await
                .unwrap_or_default();
            assert_eq!(back, payload);
        }
    }

    #[tokio::test]
    async fn damaged_rows_are_errors() {
        let payload = sample(5000);
        let stored = compress(&payload).await.unwrap_or_default();
        assert!(decompress(stored.clone(), 4999, "t").await.is_err());
        assert!(decompress(stored.clone(), 5001, "t").await.is_err());
        assert!(decompress(b"not zlib".to_vec(), 8, "t").await.is_err());
        let mut cut = stored;
        cut.truncate(cut.len() / 2);
        let err = decompress(cut, 5000, "shop.listOrders").await.err();
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("shop.listOrders") && text.contains("corrupt"),
            "{text}"
        );
    }
}
