//! TUN devices: how IP packets of real stacks reach the router emulator (`--netns`).
//!
//! Every host namespace that holds a `kernel-tcp` or `command` flow gets a TUN device, `acc0`,
//! with the host's address on 10.201.0.0/16 (the route to every other such host). The kernel
//! hands each IP packet its stacks send to another host to the device; the router reads it from
//! the device's file descriptor, carries it across the scenario's links and queues, and writes it
//! to the destination host's device, whose kernel receives it as from a network. A TUN device
//! (`IFF_TUN | IFF_NO_PI`) carries bare IP packets: no link layer, no ARP. Without
//! `IFF_VNET_HDR` it offers no segmentation offload, so the kernel hands it packets no larger
//! than its MTU — the scenario's packet size — as a NIC without TSO would see them.
//!
//! TUN was chosen over AF_PACKET on the router side of the veth pairs because it needs no
//! Ethernet framing or neighbour discovery and gives the router one descriptor per host that is
//! already a packet queue; the cost is one more copy through the kernel for each packet, which
//! `acclab live bench` measures.

use std::fs::File;

/// The device's name in every host namespace.
pub const DEVICE: &str = "acc0";

/// Opens /dev/net/tun, non-blocking, and attaches it to a new device [`DEVICE`] in the calling
/// thread's network namespace ([`crate::netns::in_namespace`] runs it in a host's): the device
/// stays in that namespace, and so does the descriptor's queue.
#[cfg(not(target_os = "linux"))]
pub fn open() -> std::io::Result<File> {
    Err(std::io::Error::other("TUN devices are used only on Linux"))
}

/// `TUNSETIFF` (linux/if_tun.h): `_IOW('T', 202, int)`.
#[cfg(target_os = "linux")]
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
#[cfg(target_os = "linux")]
const IFF_TUN: libc::c_short = 0x0001;
#[cfg(target_os = "linux")]
const IFF_NO_PI: libc::c_short = 0x1000;

/// Opens /dev/net/tun, non-blocking, and attaches it to a new device [`DEVICE`] in the calling
/// thread's network namespace ([`crate::netns::in_namespace`] runs it in a host's): the device
/// stays in that namespace, and so does the descriptor's queue.
#[cfg(target_os = "linux")]
pub fn open() -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    // struct ifreq: the name, then the flags in the union.
    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        _pad: [u8; 22],
    }
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..DEVICE.len()].copy_from_slice(DEVICE.as_bytes());
    // SAFETY: a valid descriptor and a pointer to an ifreq-sized struct that outlives the call.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}
