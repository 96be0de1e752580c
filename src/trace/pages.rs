//! Where a point-to-point message's buffers start in their pages, as the tracer records them
//! (tracer/FORMAT.md, flags 32 and 64; the model's §13, "Aliased single copies").

/// Stored flag (never an [`super::Event`]'s): the event's [`PageOffsets`] are kept beside its columns.
pub(crate) const FLAG_PAGES: u8 = 32;

/// Where a message's buffers start in their 4,096-byte pages, where its record says (FORMAT.md,
/// flags 32 and 64: messages of at least 1,024 contiguous bytes): the byte offset of the
/// buffer received into (a receive's, a Sendrecv's receive half's) and of the buffer sent from
/// (a send's, a Sendrecv's send half's). A single copy between two buffers whose offsets differ
/// by a few bytes runs slower (the model's §9, "Where buffers lie").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageOffsets {
    pub recv: Option<u16>,
    pub send: Option<u16>,
}

impl PageOffsets {
    /// None known.
    pub const NONE: PageOffsets = PageOffsets {
        recv: None,
        send: None,
    };

    /// As one word: each offset + 1 (0: none), the receive buffer's in bits 0–15.
    pub fn word(self) -> u64 {
        let one = |o: Option<u16>| o.map_or(0, |o| o as u64 + 1);
        one(self.recv) | one(self.send) << 16
    }

    /// As a record's flags say them (FORMAT.md): bit 5 and the receive buffer's offset in bits
    /// 8–19, bit 6 and the send buffer's in bits 20–31.
    pub fn record_flags(self) -> u64 {
        let recv = self.recv.map_or(0, |o| 32 | (o as u64) << 8);
        recv | self.send.map_or(0, |o| 64 | (o as u64) << 20)
    }

    /// From [`PageOffsets::word`].
    pub fn of_word(w: u64) -> PageOffsets {
        let one = |v: u64| (v & 0xffff).checked_sub(1).map(|o| o as u16);
        PageOffsets {
            recv: one(w),
            send: one(w >> 16),
        }
    }
}
