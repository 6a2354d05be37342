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
}
