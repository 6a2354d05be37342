//! Propagation pipes: every packet on its way along a link, in one slab of slots shared by all
//! links, each link's packets a FIFO list threaded through the slots.
//!
//! Why one slab rather than a ring per link: at 1,000 flows a hop rarely finds its link's ring
//! in cache (4,002 links, each visited every few milliseconds), so writing a packet into it
//! missed the cache at nearly every hop (cachegrind: 57% of the run's last-level write misses
//! in the pipe's `push_back`). Here a packet keeps its slot from hop to hop: taken out of one
//! pipe's list at the far end, it is linked into the next link's list where it is, never
//! copied out and back. A packet from an endpoint takes the slot freed last (last in, first
//! out), so it is written where a packet was just read: the slots in use are the packets in
//! flight, a few hundred kilobytes that stay in cache.
//!
//! A link keeps only its list's ends ([`Pipe`], 12 bytes in its first cache line). On a link
//! whose packets enter the pipe when they are enqueued (their departure fixed then), the pipe
//! holds the queue too: the packets whose transmission has not started are its last ones, from
//! `queued` on, each with the time it was queued — the packets are held once, here.

use acclab_core::{Packet, Time};

/// The end of a list, and a slot not in one.
const NIL: u32 = u32::MAX;

/// A packet on its link: when it reaches the far end, the slot after it in its pipe (or in the
/// free list) and when that one arrives, where its route is, and when it was queued (if it
/// entered the pipe queued).
///
/// Aligned to 32 bytes, so that a slot (96 bytes) always lies in two cache lines: at the
/// allocator's alignment (16) every other slot reached into a third line, which the event
/// loop's prefetch of two lines left out. Its first 32 bytes are what a hop reads and writes —
/// the pipe's fields and the packet's size, hop, ECN field and kind (`Packet`'s first 8
/// bytes) — and lie in one cache line wherever the slot starts (at 0 or 32 in a line), so a
/// packet that does not queue touches one line of its slot at a hop, not two (issue 56,
/// session 43: a k = 16 fabric's hops missed the last-level cache 2.5 times each in the slots).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot {
    arrival: Time,
    /// Of the packet in slot `next`, written with `next`: when it arrives, as the time after
    /// this one's (`GAP_UNKNOWN` if too long for 32 bits: it is then read from its slot), and
    /// where it goes after this link (the driver's word: its next link, or a marker of the
    /// endpoint it is delivered to). So the packet taken out tells when the next one is due,
    /// and where it goes, without a read of the next one's slot (written a propagation delay
    /// ago, rarely still in cache: that read was the slowest load of a 1000-flow run).
    next_gap: u32,
    next_then: u32,
    next: u32,
    /// Where the packet's route begins in the driver's route table, given with the packet
    /// ([`Slab::alloc`]): at the far end of a link the driver finds the next link from the
    /// slot it already holds, without a read of the flow's state (at 10,000 flows a miss
    /// per hop).
    route: u32,
    pkt: Packet,
    /// Written only for a packet that entered its pipe queued (read only of those).
    queued_at: Time,
}

impl Slot {
    /// A slot not handed out yet.
    fn blank() -> Slot {
        Slot {
            pkt: Packet::new(acclab_core::FlowId(0), acclab_core::PacketKind::Data, 0),
            arrival: Time::ZERO,
            queued_at: Time::ZERO,
            next_gap: 0,
            next_then: NIL,
            next: NIL,
            route: 0,
        }
    }
}

/// [`Slot::next_gap`] when the next packet arrives 2^32 - 1 ns or more after the one ahead.
const GAP_UNKNOWN: u32 = u32::MAX;

/// The memory a packet takes while it is on a link (the cost estimate counts it): its slot.
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

// Three slots in every three cache lines, none across more than two; a hop's fields in the
// first 32 bytes (the packet's own from byte 24).
const _: () = assert!(
    std::mem::size_of::<Slot>() == 96
        && std::mem::align_of::<Slot>() == 32
        && std::mem::offset_of!(Slot, pkt) == 24
        && std::mem::offset_of!(Slot, queued_at) == 88
);

/// One link's packets, oldest first: the ends of a list in a [`Slab`], and where its queued
/// part begins.
#[derive(Clone, Copy, Debug)]
pub struct Pipe {
    head: u32,
    tail: u32,
    /// The first packet whose transmission has not started (`NIL` if none): every packet from
    /// here to the tail is queued.
    queued: u32,
}

impl Default for Pipe {
    fn default() -> Pipe {
        Pipe {
            head: NIL,
            tail: NIL,
            queued: NIL,
        }
    }
}

impl Pipe {
    /// The slot of the pipe's first packet (`u32::MAX` if none).
    #[inline(always)]
    pub fn head(&self) -> u32 {
        self.head
    }

    /// Whether the pipe holds packets whose transmission has not started.
    #[inline(always)]
    pub fn has_queued(&self) -> bool {
        self.queued != NIL
    }
}

/// The slots of every pipe. Freed slots are reused last in, first out.
///
/// A slot is read without a bounds check, soundly: the slab always has a power of two of
/// slots, and slot `i` is read at `i & mask`, within them whatever `i` is (an index the slab
/// did not hand out reads some other slot: a logic error, caught by a debug assertion, never
/// memory outside the slab). The checks were 7 instructions a hop on `dumbbell-10`
/// (docs/performance.md, sessions 40–41).
pub struct Slab {
    /// A power of two of slots (`mask + 1`), the first `made` handed out at some time.
    slots: Vec<Slot>,
    /// The most recently freed slot; the free slots are a list through `next`.
    free: u32,
    /// `slots.len() - 1`.
    mask: usize,
    /// How many slots have been handed out (the most packets in flight at once): those after
    /// are blank.
    made: u32,
}

/// The slots a slab starts with.
const FIRST_SLOTS: usize = 64;

impl Slab {
    pub fn new() -> Slab {
        Slab {
            slots: vec![Slot::blank(); FIRST_SLOTS],
            free: NIL,
            mask: FIRST_SLOTS - 1,
            made: 0,
        }
    }

    /// Slot `i`, without a bounds check (see [`Slab`]).
    #[inline(always)]
    fn at(&self, i: u32) -> &Slot {
        debug_assert!(i < self.made, "slot {i} was never handed out");
        // SAFETY: `slots.len() == mask + 1` (`new`, `grow`), so `i & mask < slots.len()`.
        unsafe { self.slots.get_unchecked(i as usize & self.mask) }
    }

    /// Slot `i`, to change, without a bounds check (see [`Slab`]).
    #[inline(always)]
    fn at_mut(&mut self, i: u32) -> &mut Slot {
        debug_assert!(i < self.made, "slot {i} was never handed out");
        // SAFETY: as in `at`.
        unsafe { self.slots.get_unchecked_mut(i as usize & self.mask) }
    }

    /// Fetches slot `i` into the cache, if there is one.
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        if let Some(s) = self.slots.get(i as usize) {
            prefetch(s);
        }
    }

    /// When the last packet of `pipe` arrives, if it holds any.
    #[cfg(test)]
    pub fn back_arrival(&self, pipe: &Pipe) -> Option<Time> {
        (pipe.tail != NIL).then(|| self.at(pipe.tail).arrival)
    }

    /// When the first packet of `pipe` arrives, if it holds any.
    #[inline(always)]
    pub fn front_arrival(&self, pipe: &Pipe) -> Option<Time> {
        (pipe.head != NIL).then(|| self.at(pipe.head).arrival)
    }

    /// Puts `pkt`, whose route begins at `route` in the driver's route table, in a free slot,
    /// in no pipe yet; returns the slot.
    #[inline(always)]
    pub fn alloc(&mut self, pkt: Packet, route: u32) -> u32 {
        let slot = Slot {
            pkt,
            arrival: Time::ZERO,
            queued_at: Time::ZERO,
            next_gap: 0,
            next_then: NIL,
            next: NIL,
            route,
        };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.at(i).next;
            i
        } else {
            if self.made as usize == self.slots.len() {
                self.grow();
            }
            self.made += 1;
            self.made - 1
        };
        *self.at_mut(i) = slot;
        i
    }

    /// Twice the slots, every one handed out.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = 2 * self.slots.len();
        assert!(
            n <= 1 << 31,
            "more packets in flight than slots can be numbered"
        );
        self.slots.resize(n, Slot::blank());
        self.mask = n - 1;
    }

    /// The packet in slot `i`.
    #[inline(always)]
    pub fn packet(&self, i: u32) -> &Packet {
        &self.at(i).pkt
    }

    /// The packet in slot `i`, to change in place.
    #[inline(always)]
    pub fn packet_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.at_mut(i).pkt
    }

    /// The packet in slot `i` and where its route begins (as given to [`alloc`](Self::alloc)).
    #[inline(always)]
    pub fn packet_and_route(&self, i: u32) -> (&Packet, u32) {
        let s = self.at(i);
        (&s.pkt, s.route)
    }

    /// Frees slot `i`, in no pipe.
    #[inline(always)]
    pub fn free(&mut self, i: u32) {
        self.at_mut(i).next = self.free;
        self.free = i;
    }

    /// Frees slot `i`, in no pipe, and returns the packet it held.
    #[inline(always)]
    pub fn release(&mut self, i: u32) -> Packet {
        let pkt = self.at(i).pkt;
        self.free(i);
        pkt
    }

    /// Appends the packet in slot `i` (in no pipe: [allocated](Self::alloc) or
    /// [taken out](Self::take_front) of another) to `pipe`, due at the far end at `due` or with
    /// the packet ahead if that one arrives later (FIFO: a delay decrease, or a shorter draw,
    /// never lets a packet overtake). Returns its arrival and whether it is the pipe's only
    /// packet (the one decision whether the pipe was empty, made once). With `queued: Some(at)`
    /// the packet was queued at `at` and its transmission has not started: it joins the pipe's
    /// queued part (which a pipe that takes such packets only ever takes at its end). `then`
    /// is where it goes after the link (told by [`take_front`](Self::take_front) when the
    /// packet ahead is taken out).
    #[inline(always)]
    pub fn link_back(
        &mut self,
        pipe: &mut Pipe,
        i: u32,
        due: Time,
        queued: Option<Time>,
        then: u32,
    ) -> (Time, bool) {
        debug_assert!(
            queued.is_some() || pipe.queued == NIL,
            "a started packet behind queued ones"
        );
        let alone = pipe.tail == NIL;
        let arrival = if alone {
            pipe.head = i;
            due
        } else {
            let tail = self.at_mut(pipe.tail);
            let arrival = due.max(tail.arrival);
            tail.next = i;
            // (`arrival` is no earlier than the tail's.)
            tail.next_gap = (arrival.0 - tail.arrival.0).min(u64::from(GAP_UNKNOWN)) as u32;
            tail.next_then = then;
            arrival
        };
        let slot = self.at_mut(i);
        slot.arrival = arrival;
        slot.next = NIL;
        pipe.tail = i;
        if let Some(q) = queued {
            // Its second line, only when it will be read (`first_queued`).
            slot.queued_at = q;
            if pipe.queued == NIL {
                pipe.queued = i;
            }
        }
        (arrival, alone)
    }

    /// Appends `pkt`, due at `due`, to `pipe` (see [`link_back`](Self::link_back)).
    #[cfg(test)]
    fn push_back(
        &mut self,
        pipe: &mut Pipe,
        due: Time,
        pkt: Packet,
        queued: Option<Time>,
    ) -> &mut Packet {
        let i = self.alloc(pkt, 0);
        self.link_back(pipe, i, due, queued, NIL);
        self.packet_mut(i)
    }

    /// The first packet of `pipe`'s queued part, in place, when it was queued and when it
    /// arrives at the far end.
    #[inline(always)]
    pub fn first_queued(&self, pipe: &Pipe) -> Option<(&Packet, Time, Time)> {
        let s = self.slots.get(pipe.queued as usize)?;
        Some((&s.pkt, s.queued_at, s.arrival))
    }

    /// The [`first_queued`](Self::first_queued) packet has started its transmission: it
    /// leaves the queued part.
    #[inline(always)]
    pub fn start_first_queued(&mut self, pipe: &mut Pipe) {
        if let Some(s) = self.slots.get(pipe.queued as usize) {
            pipe.queued = s.next;
        }
    }

    /// Whether `pipe`'s first packet is still queued (its transmission not yet reported
    /// started): it must be before it can be taken out.
    #[inline(always)]
    pub fn front_is_queued(&self, pipe: &Pipe) -> bool {
        pipe.head != NIL && pipe.head == pipe.queued
    }

    /// Takes the first packet of `pipe` out, leaving it in its slot (for
    /// [`link_back`](Self::link_back) into the next link's pipe, or to be
    /// [freed](Self::free)); returns the slot, and, if any packet is left, when the one now
    /// first arrives and where it goes then (as given to [`link_back`](Self::link_back)). A
    /// packet moves from pipe to pipe in its slot, never copied out and back.
    #[inline(always)]
    pub fn take_front(&mut self, pipe: &mut Pipe) -> Option<(u32, Option<(Time, u32)>)> {
        if pipe.head == NIL {
            return None;
        }
        debug_assert!(pipe.head != pipe.queued, "a queued packet taken out");
        let i = pipe.head;
        let slot = self.at(i);
        pipe.head = slot.next;
        let next = if pipe.head == NIL {
            pipe.tail = NIL;
            None
        } else {
            // The packet behind is this link's next arrival: its slot, written a propagation
            // delay ago, is fetched now, a link-event ahead (at 10,000 flows the event loop's
            // one-event-ahead prefetch came too late for it: the run's slowest load).
            if let Some(n) = self.slots.get(pipe.head as usize) {
                prefetch(n);
            }
            let arrival = match slot.next_gap {
                GAP_UNKNOWN => self.at(pipe.head).arrival,
                gap => Time(slot.arrival.0 + u64::from(gap)),
            };
            Some((arrival, slot.next_then))
        };
        Some((i, next))
    }

    /// Takes the first packet of `pipe` out and frees its slot.
    #[cfg(test)]
    fn pop_front(&mut self, pipe: &mut Pipe) -> Option<(Packet, Option<Time>)> {
        let (i, next) = self.take_front(pipe)?;
        Some((self.release(i), next.map(|(t, _)| t)))
    }

    /// The packets of `pipe`, oldest first, with their arrival times.
    pub fn iter<'a>(&'a self, pipe: &Pipe) -> impl Iterator<Item = (Time, &'a Packet)> + 'a {
        let mut i = pipe.head;
        std::iter::from_fn(move || {
            let s = self.slots.get(i as usize)?;
            i = s.next;
            Some((s.arrival, &s.pkt))
        })
    }
}

/// Asks the processor to bring the cache lines of `x` (up to two) into its cache, without
/// waiting for them.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_bytes((x as *const T).cast(), std::mem::size_of::<T>());
}

/// Asks the processor to bring the cache lines of the first `bytes` bytes from `p` (up to two
/// lines) into its cache, without waiting for them. `p` need not point into anything.
#[inline(always)]
pub fn prefetch_bytes(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = p.cast::<i8>();
        // SAFETY: a prefetch is only a hint: it reads nothing the program sees and cannot
        // fault, whatever the address.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch(p, _MM_HINT_T0);
            if bytes > 64 {
                _mm_prefetch(p.wrapping_add(64), _MM_HINT_T0);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_core::{FlowId, PacketKind};

    fn pkt(seq: u64) -> Packet {
        let mut p = Packet::new(FlowId(0), PacketKind::Data, 1000);
        p.seq = seq;
        p
    }

    /// Pipes interleaved in one slab keep their own order, against a `VecDeque` per pipe,
    /// and the slab never holds more slots than packets were in flight at once.
    #[test]
    fn pipes_are_fifo_and_reuse_freed_slots() {
        use std::collections::VecDeque;
        let mut slab = Slab::new();
        let mut pipes = [Pipe::default(); 4];
        let mut model: [VecDeque<(Time, u64)>; 4] = Default::default();
        let (mut x, mut seq, mut most) = (7u64, 0u64, 0usize);
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let p = (x >> 40) as usize % 4;
            if (x >> 20) % 3 != 0 {
                slab.push_back(&mut pipes[p], Time(step), pkt(seq), None)
                    .hop = 1;
                model[p].push_back((Time(step), seq));
                seq += 1;
            } else {
                let got = slab.pop_front(&mut pipes[p]).map(|(q, next)| {
                    // It tells when the next one arrives.
                    assert_eq!(next, slab.front_arrival(&pipes[p]));
                    (q.seq, q.hop)
                });
                assert_eq!(got, model[p].pop_front().map(|(_, s)| (s, 1)));
            }
            for (pipe, m) in pipes.iter().zip(&model) {
                assert_eq!(slab.front_arrival(pipe), m.front().map(|e| e.0));
                assert_eq!(slab.back_arrival(pipe), m.back().map(|e| e.0));
            }
            most = most.max(model.iter().map(VecDeque::len).sum());
        }
        for (pipe, m) in pipes.iter().zip(&model) {
            let held: Vec<_> = slab.iter(pipe).map(|(t, p)| (t, p.seq)).collect();
            assert_eq!(held, m.iter().copied().collect::<Vec<_>>());
        }
        // Slots ever used: the most packets that were in flight at once.
        assert_eq!(slab.made as usize, most);
        assert_eq!(slab.slots.len(), most.next_power_of_two().max(FIRST_SLOTS));
    }

    /// A packet taken out of one pipe and linked into another keeps its slot, and is at the
    /// other's end.
    #[test]
    fn a_packet_moves_between_pipes_in_its_slot() {
        let mut slab = Slab::new();
        let (mut a, mut b) = (Pipe::default(), Pipe::default());
        slab.push_back(&mut a, Time(10), pkt(0), None);
        slab.push_back(&mut a, Time(20), pkt(1), None);
        slab.push_back(&mut b, Time(5), pkt(2), None);
        let (i, next) = slab.take_front(&mut a).unwrap();
        assert_eq!((slab.packet(i).seq, next), (0, Some((Time(20), NIL))));
        assert_eq!(
            slab.link_back(&mut b, i, Time(30), None, 3),
            (Time(30), false)
        );
        slab.packet_mut(i).hop = 7;
        let in_b: Vec<_> = slab.iter(&b).map(|(t, p)| (t, p.seq, p.hop)).collect();
        assert_eq!(in_b, vec![(Time(5), 2, 0), (Time(30), 0, 7)]);
        let in_a: Vec<_> = slab.iter(&a).map(|(t, p)| (t, p.seq)).collect();
        assert_eq!(in_a, vec![(Time(20), 1)]);
        assert_eq!(slab.made, 3, "no slot taken for the move");
        // A slot freed is the next one handed out.
        let (j, _) = slab.take_front(&mut a).unwrap();
        slab.free(j);
        assert_eq!(slab.alloc(pkt(3), 0), j);
        // The route given with a packet stays with it.
        let k = slab.alloc(pkt(9), 42);
        slab.link_back(&mut b, k, Time(40), None, 17);
        assert_eq!(slab.packet_and_route(k).1, 42);
        // Each packet taken out tells when the next arrives and where it goes then.
        let (first, next) = slab.take_front(&mut b).unwrap();
        assert_eq!((slab.packet(first).seq, next), (2, Some((Time(30), 3))));
        assert_eq!(slab.take_front(&mut b).unwrap(), (i, Some((Time(40), 17))));
        assert_eq!(slab.take_front(&mut b).unwrap(), (k, None));
        // One that arrives 2^32 ns or more after the one ahead has its time read from its slot.
        let far = Time(40 + (1 << 32));
        slab.link_back(&mut b, i, Time(40), None, 5);
        slab.link_back(&mut b, k, far, None, 6);
        assert_eq!(slab.take_front(&mut b).unwrap(), (i, Some((far, 6))));
    }

    /// A packet due before the one ahead arrives with it, and the pipe says when it was empty.
    #[test]
    fn a_pipe_never_lets_a_packet_overtake() {
        let mut slab = Slab::new();
        let mut pipe = Pipe::default();
        let [a, b, c] = [0, 1, 2].map(|s| slab.alloc(pkt(s), 0));
        assert_eq!(
            slab.link_back(&mut pipe, a, Time(50), None, NIL),
            (Time(50), true)
        );
        assert_eq!(
            slab.link_back(&mut pipe, b, Time(40), None, NIL),
            (Time(50), false)
        );
        assert_eq!(
            slab.link_back(&mut pipe, c, Time(60), None, NIL),
            (Time(60), false)
        );
        let held: Vec<_> = slab.iter(&pipe).map(|(t, p)| (t, p.seq)).collect();
        assert_eq!(held, vec![(Time(50), 0), (Time(50), 1), (Time(60), 2)]);
        while let Some((j, _)) = slab.take_front(&mut pipe) {
            slab.free(j);
        }
        let d = slab.alloc(pkt(3), 0);
        assert_eq!(
            slab.link_back(&mut pipe, d, Time(10), None, NIL),
            (Time(10), true)
        );
    }

    /// A pipe's queued part is its last packets, started one by one in order.
    #[test]
    fn the_queued_part_is_the_pipes_end() {
        let mut slab = Slab::new();
        let mut pipe = Pipe::default();
        slab.push_back(&mut pipe, Time(10), pkt(0), Some(Time(1)));
        slab.push_back(&mut pipe, Time(20), pkt(1), Some(Time(2)));
        assert!(slab.front_is_queued(&pipe));
        assert_eq!(
            slab.first_queued(&pipe).map(|(p, at, _)| (p.seq, at)),
            Some((0, Time(1)))
        );
        slab.start_first_queued(&mut pipe);
        assert!(!slab.front_is_queued(&pipe));
        assert_eq!(
            slab.first_queued(&pipe).map(|(p, at, _)| (p.seq, at)),
            Some((1, Time(2)))
        );
        assert_eq!(
            slab.pop_front(&mut pipe).map(|(p, next)| (p.seq, next)),
            Some((0, Some(Time(20))))
        );
        assert!(slab.front_is_queued(&pipe));
        slab.start_first_queued(&mut pipe);
        assert!(slab.first_queued(&pipe).is_none());
        slab.push_back(&mut pipe, Time(30), pkt(2), Some(Time(3)));
        assert_eq!(
            slab.first_queued(&pipe)
                .map(|(p, _, arrival)| (p.seq, arrival)),
            Some((2, Time(30)))
        );
        let all: Vec<_> = slab.iter(&pipe).map(|(t, p)| (t, p.seq)).collect();
        assert_eq!(all, vec![(Time(20), 1), (Time(30), 2)]);
    }
}
