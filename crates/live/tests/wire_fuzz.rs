//! Fuzzing the datagram decoder with proptest: whatever arrives on the router's socket, decoding
//! returns a packet or a typed error, never a panic; and every packet it accepts encodes back to
//! the same bytes (up to the padding, which carries nothing).

use acclab_live::wire::{self, HEADER_LEN};
use proptest::prelude::*;

/// A valid header with arbitrary field values, then arbitrary damage.
fn near_valid() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), HEADER_LEN),
        0u8..6,
        0u8..8,
        1u32..1600,
        proptest::collection::vec((0usize..HEADER_LEN, any::<u8>()), 0..3),
        -3i32..3,
    )
        .prop_map(|(mut h, kind, ecn, size, damage, len_delta)| {
            h[..3].copy_from_slice(b"AL\x01");
            h[3] = kind;
            h[4] = ecn;
            h[5] = 0;
            h[14..18].copy_from_slice(&size.to_be_bytes());
            h[58..66].copy_from_slice(&1.5f64.to_bits().to_be_bytes());
            for (at, b) in damage {
                h[at] = b;
            }
            let len = (wire::datagram_len(size) as i64 + len_delta as i64).max(0) as usize;
            h.resize(len, 0);
            h
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn decoder_never_panics_on_bytes(d in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = wire::decode(&d);
    }

    #[test]
    fn accepted_datagrams_re_encode_to_themselves(d in near_valid()) {
        if let Ok(p) = wire::decode(&d) {
            let mut again = Vec::new();
            wire::encode(&p, &mut again);
            prop_assert_eq!(&again[..HEADER_LEN], &d[..HEADER_LEN]);
            prop_assert_eq!(again.len(), d.len());
        }
    }
}
