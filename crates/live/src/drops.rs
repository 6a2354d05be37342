//! Datagrams the kernel dropped at a socket before the program could read them.
//!
//! A UDP socket whose receive buffer is full (the reader fell behind) drops what arrives, and
//! nothing on the wire says so: the sender's count is right, the receiver simply never sees the
//! datagram. Linux counts these drops per socket (`sk_drops`, the counter `SO_RXQ_OVFL` reports
//! per message); `getsockopt(SO_MEMINFO)` reads it at any time, which is what a live run does at
//! its end for the router's socket and every endpoint's, to report them in summary.json and to
//! mark the run degraded when there were any.

/// `SO_MEMINFO` (include/uapi/asm-generic/socket.h; not in the libc crate).
#[cfg(target_os = "linux")]
const SO_MEMINFO: libc::c_int = 55;
/// `SK_MEMINFO_VARS` (include/uapi/linux/sock_diag.h).
#[cfg(target_os = "linux")]
const SK_MEMINFO_VARS: usize = 9;

/// The datagrams the kernel dropped at the socket `fd` so far, if the system says.
#[cfg(target_os = "linux")]
pub fn dropped(fd: std::os::fd::RawFd) -> Option<u64> {
    let mut info = [0u32; SK_MEMINFO_VARS];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` is a writable buffer of `len` bytes and `len` a valid socklen_t, both
    // living across the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let drops = libc::SK_MEMINFO_DROPS as usize;
    (r == 0 && len as usize > drops * 4).then(|| u64::from(info[drops]))
}

#[cfg(not(target_os = "linux"))]
pub fn dropped(_fd: i32) -> Option<u64> {
    None
}

/// The receive buffer the router asks for: 8 MiB, about 3,600 full datagrams — a stall of a
/// second at the fastest rate the emulator keeps (`acclab live bench`). The kernel's default
/// (`net.core.rmem_default`, 208 KiB: under 100 full datagrams once their bookkeeping is counted)
/// overflowed during a few milliseconds' stall of a loaded machine, and every datagram lost there
/// is a control packet or data packet the scenario never dropped.
pub const ROUTER_RECEIVE_BUFFER: usize = 8 << 20;

/// Asks for a receive buffer of `bytes` at the socket `fd`: beyond `net.core.rmem_max` where
/// allowed (`SO_RCVBUFFORCE`, CAP_NET_ADMIN), else as much as `SO_RCVBUF` gives. Returns the
/// size the kernel reports (it doubles what it is given, for its bookkeeping).
#[cfg(target_os = "linux")]
pub fn enlarge_receive_buffer(fd: std::os::fd::RawFd, bytes: usize) -> Option<usize> {
    let want = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    let set = |opt| {
        // SAFETY: `want` is a c_int living across the call, passed with its size.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&want as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    if set(libc::SO_RCVBUFFORCE) != 0 {
        set(libc::SO_RCVBUF);
    }
    let mut got: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `got` is a writable c_int and `len` its size, both living across the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&mut got as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(got as usize)
}

#[cfg(not(target_os = "linux"))]
pub fn enlarge_receive_buffer(_fd: i32, _bytes: usize) -> Option<usize> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::fd::AsRawFd;

    /// A socket nobody reads, flooded past its receive buffer, reports the datagrams it dropped.
    #[test]
    fn a_full_receive_buffer_counts_its_drops() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(super::dropped(rx.as_raw_fd()), Some(0));
        let d = [0u8; 1400];
        let n = 5000;
        for _ in 0..n {
            tx.send_to(&d, rx.local_addr().unwrap()).unwrap();
        }
        let dropped = super::dropped(rx.as_raw_fd()).unwrap();
        let mut buf = [0u8; 2000];
        rx.set_nonblocking(true).unwrap();
        let mut read = 0;
        while rx.recv(&mut buf).is_ok() {
            read += 1;
        }
        assert!(
            dropped > 0,
            "7 MB into a default receive buffer dropped nothing"
        );
        assert_eq!(read + dropped, n, "read {read}, dropped {dropped}");
    }

    #[test]
    fn the_router_buffer_takes_a_burst_the_default_drops() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let got = super::enlarge_receive_buffer(rx.as_raw_fd(), super::ROUTER_RECEIVE_BUFFER)
            .expect("the kernel reports the buffer");
        // The kernel doubles the size for its bookkeeping; without CAP_NET_ADMIN it stops at
        // net.core.rmem_max.
        let max = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(0);
        let root = unsafe { libc::geteuid() } == 0;
        let expected = if root {
            super::ROUTER_RECEIVE_BUFFER
        } else {
            super::ROUTER_RECEIVE_BUFFER.min(max)
        };
        assert!(got >= 2 * expected, "asked {expected}, got {got}");
        // The burst of the test above: 5000 datagrams of 1400 bytes, none dropped in 8 MiB.
        if got >= 2 * super::ROUTER_RECEIVE_BUFFER {
            let d = [0u8; 1400];
            for _ in 0..5000 {
                tx.send_to(&d, rx.local_addr().unwrap()).unwrap();
            }
            assert_eq!(super::dropped(rx.as_raw_fd()), Some(0));
        }
    }
}
