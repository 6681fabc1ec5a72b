//! Lowercase hexadecimal, as digests are written in keys and ids.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lowercase hex, two digits a byte.
pub fn lower(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(DIGITS[usize::from(b >> 4)] as char);
        text.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_byte_is_two_digits_as_format_writes_them() {
        let bytes: Vec<u8> = (0..=255).collect();
        let formatted: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::lower(&bytes), formatted);
        assert_eq!(super::lower(&[]), "");
    }
}
