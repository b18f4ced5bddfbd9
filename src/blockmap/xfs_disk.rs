//! XFS on-disk structures that the GETFSMAP walk reads from the device: the primary
//! superblock (geometry and identity) and v3 inode cores (mode and size). Pure: bytes
//! in, values or the reason they were not believed out. Every field is big-endian; every
//! structure read carries a CRC32C (v5 filesystems), which is checked, and an inode also
//! its own number and the filesystem's UUID, which are checked too, so that a torn or
//! misplaced read is never taken for an inode.
//!
//! Offsets are those of `struct xfs_dsb` and `struct xfs_dinode` in the kernel's
//! `fs/xfs/libxfs/xfs_format.h`.

/// `sb_magicnum`: "XFSB".
const SB_MAGIC: u32 = 0x5846_5342;
/// `di_magic`: "IN".
const DINODE_MAGIC: u16 = 0x494e;
/// `sb_features_incompat`: the metadata UUID differs from `sb_uuid`.
const INCOMPAT_META_UUID: u32 = 1 << 2;
/// Where `sb_crc` and `di_crc` are.
const SB_CRC_OFF: usize = 224;
const DINODE_CRC_OFF: usize = 100;
/// Bytes of a v3 inode core (up to `di_uuid`'s end).
const DINODE_V3_CORE: usize = 176;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn uuid(b: &[u8], at: usize) -> [u8; 16] {
    b[at..at + 16].try_into().expect("16 bytes")
}

/// Why a superblock was not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SuperblockError {
    #[error("{0} bytes are less than a superblock")]
    Short(usize),
    #[error("no XFS superblock (magic {0:#010x})")]
    Magic(u32),
    #[error("XFS version {0}: inodes of versions before 5 carry no checksum")]
    NotV5(u16),
    #[error("the superblock's checksum does not match")]
    Checksum,
    #[error("implausible geometry: {0}")]
    Geometry(&'static str),
}

/// What the inode reader needs of a primary superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superblock {
    pub blocksize: u32,
    pub agblocks: u32,
    pub agcount: u32,
    pub sectsize: u16,
    pub inodesize: u16,
    /// log2 of `agblocks`, rounded up: the bits of an inode number's block in its group.
    pub agblklog: u8,
    /// log2 of inodes per block.
    pub inopblog: u8,
    /// `sb_uuid`: what `XFS_IOC_FSGEOMETRY` reports.
    pub uuid: [u8; 16],
    /// The UUID stamped in metadata (`sb_meta_uuid` when it differs, else `sb_uuid`).
    pub meta_uuid: [u8; 16],
}

/// Parse and check the primary superblock at the start of `b` (at least `sb_sectsize`
/// bytes: the checksum covers the sector).
pub fn parse_superblock(b: &[u8]) -> Result<Superblock, SuperblockError> {
    if b.len() < 512 {
        return Err(SuperblockError::Short(b.len()));
    }
    let magic = be32(b, 0);
    if magic != SB_MAGIC {
        return Err(SuperblockError::Magic(magic));
    }
    let version = be16(b, 100) & 0xf;
    if version != 5 {
        return Err(SuperblockError::NotV5(version));
    }
    let sectsize = be16(b, 102);
    if !sectsize.is_power_of_two() || sectsize < 512 {
        return Err(SuperblockError::Geometry("sector size"));
    }
    if b.len() < sectsize as usize {
        return Err(SuperblockError::Short(b.len()));
    }
    if crc32c_with_hole(&b[..sectsize as usize], SB_CRC_OFF)
        != u32::from_le_bytes(b[SB_CRC_OFF..SB_CRC_OFF + 4].try_into().expect("4"))
    {
        return Err(SuperblockError::Checksum);
    }
    let sb = Superblock {
        blocksize: be32(b, 4),
        agblocks: be32(b, 84),
        agcount: be32(b, 88),
        sectsize,
        inodesize: be16(b, 104),
        agblklog: b[124],
        inopblog: b[123],
        uuid: uuid(b, 32),
        meta_uuid: if be32(b, 216) & INCOMPAT_META_UUID != 0 {
            uuid(b, 248)
        } else {
            uuid(b, 32)
        },
    };
    let bs = sb.blocksize;
    let is = u32::from(sb.inodesize);
    if !bs.is_power_of_two() || !(512..=65536).contains(&bs) {
        return Err(SuperblockError::Geometry("block size"));
    }
    if !is.is_power_of_two() || !(256..=2048).contains(&is) || is > bs {
        return Err(SuperblockError::Geometry("inode size"));
    }
    if 1u32 << sb.inopblog != bs / is {
        return Err(SuperblockError::Geometry("inodes per block"));
    }
    if sb.agblocks == 0
        || sb.agcount == 0
        || sb.agblklog >= 32
        || (1u64 << sb.agblklog) < u64::from(sb.agblocks)
        || (sb.agblklog > 0 && (1u64 << (sb.agblklog - 1)) >= u64::from(sb.agblocks))
    {
        return Err(SuperblockError::Geometry("allocation group size"));
    }
    Ok(sb)
}

impl Superblock {
    /// The byte offset of inode `ino` on the data device, or None when its group is not
    /// one of the filesystem's.
    pub fn inode_offset(&self, ino: u64) -> Option<u64> {
        let inobits = u32::from(self.agblklog) + u32::from(self.inopblog);
        let agno = ino >> inobits;
        if agno >= u64::from(self.agcount) {
            return None;
        }
        let agino = ino & ((1u64 << inobits) - 1);
        let agbno = agino >> self.inopblog;
        let slot = agino & ((1u64 << self.inopblog) - 1);
        if agbno >= u64::from(self.agblocks) {
            return None;
        }
        let block = agno * u64::from(self.agblocks) + agbno;
        Some(block * u64::from(self.blocksize) + slot * u64::from(self.inodesize))
    }
}

/// Why an inode core read from the device was not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DinodeError {
    #[error("{0} bytes are less than an inode")]
    Short(usize),
    #[error("no inode magic")]
    Magic,
    #[error("inode version {0}, not 3")]
    Version(u8),
    #[error("the checksum does not match")]
    Checksum,
    #[error("it says it is inode {0}")]
    Number(u64),
    #[error("it belongs to another filesystem (UUID)")]
    Uuid,
    #[error("it is free on the device (in use since it was written back)")]
    Free,
}

/// What the block map takes from an inode core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dinode {
    /// `di_mode`: file type and permissions (never 0: a free core is [`DinodeError::Free`]).
    pub mode: u16,
    /// `di_size`: bytes.
    pub size: u64,
}

/// Parse and check inode `ino`'s core: `b` is the whole on-disk inode (`inodesize` bytes).
pub fn parse_dinode(sb: &Superblock, ino: u64, b: &[u8]) -> Result<Dinode, DinodeError> {
    let len = usize::from(sb.inodesize);
    if b.len() < len || len < DINODE_V3_CORE {
        return Err(DinodeError::Short(b.len()));
    }
    let b = &b[..len];
    if be16(b, 0) != DINODE_MAGIC {
        return Err(DinodeError::Magic);
    }
    if b[4] != 3 {
        return Err(DinodeError::Version(b[4]));
    }
    let stored = u32::from_le_bytes(b[DINODE_CRC_OFF..DINODE_CRC_OFF + 4].try_into().expect("4"));
    if crc32c_with_hole(b, DINODE_CRC_OFF) != stored {
        return Err(DinodeError::Checksum);
    }
    let said = be64(b, 152);
    if said != ino {
        return Err(DinodeError::Number(said));
    }
    if uuid(b, 160) != sb.meta_uuid {
        return Err(DinodeError::Uuid);
    }
    let mode = be16(b, 2);
    if mode == 0 {
        return Err(DinodeError::Free);
    }
    Ok(Dinode {
        mode,
        size: be64(b, 56),
    })
}

/// CRC32C (Castagnoli) of `b` with the 4 bytes at `hole` taken as zero: how XFS
/// checksums a structure that holds its own checksum (stored little-endian).
pub fn crc32c_with_hole(b: &[u8], hole: usize) -> u32 {
    let c = crc32c_update(!0, &b[..hole]);
    let c = crc32c_update(c, &[0; 4]);
    !crc32c_update(c, &b[hole + 4..])
}

/// CRC32C of `b` (the published check values are of this form).
#[cfg(test)]
fn crc32c(b: &[u8]) -> u32 {
    !crc32c_update(!0, b)
}

/// The CRC32C register after `b` (no final inversion).
fn crc32c_update(crc: u32, b: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE4.2 (checked just above).
            return unsafe { crc32c_sse42(crc, b) };
        }
    }
    crc32c_table(crc, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_sse42(crc: u32, b: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = u64::from(crc);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut c = c as u32;
    for &x in words.remainder() {
        c = _mm_crc32_u8(c, x);
    }
    c
}

/// The reflected CRC32C table (polynomial 0x82F63B78).
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

fn crc32c_table(mut crc: u32, b: &[u8]) -> u32 {
    for &x in b {
        crc = TABLE[((crc ^ u32::from(x)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_published_check_values() {
        // RFC 3720, B.4, and the "123456789" check value of CRC-32C.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let inc: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        // The table and the instruction agree at every length and offset.
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in [0, 1, 7, 8, 9, 100, 511, 1000] {
            assert_eq!(crc32c_update(!0, &data[..n]), crc32c_table(!0, &data[..n]));
        }
    }

    fn geometry() -> Superblock {
        Superblock {
            blocksize: 4096,
            agblocks: 131072,
            agcount: 4,
            sectsize: 512,
            inodesize: 512,
            agblklog: 17,
            inopblog: 3,
            uuid: [7; 16],
            meta_uuid: [7; 16],
        }
    }

    /// An inode core as XFS writes it.
    fn dinode(sb: &Superblock, ino: u64, mode: u16, size: u64) -> Vec<u8> {
        let mut b = vec![0u8; usize::from(sb.inodesize)];
        b[0..2].copy_from_slice(&DINODE_MAGIC.to_be_bytes());
        b[2..4].copy_from_slice(&mode.to_be_bytes());
        b[4] = 3;
        b[56..64].copy_from_slice(&size.to_be_bytes());
        b[152..160].copy_from_slice(&ino.to_be_bytes());
        b[160..176].copy_from_slice(&sb.meta_uuid);
        let c = crc32c_with_hole(&b, DINODE_CRC_OFF);
        b[DINODE_CRC_OFF..DINODE_CRC_OFF + 4].copy_from_slice(&c.to_le_bytes());
        b
    }

    #[test]
    fn an_inode_core_is_read_only_when_every_check_holds() {
        let sb = geometry();
        let b = dinode(&sb, 131, 0o100644, 8192);
        assert_eq!(
            parse_dinode(&sb, 131, &b),
            Ok(Dinode {
                mode: 0o100644,
                size: 8192
            })
        );
        assert_eq!(parse_dinode(&sb, 132, &b), Err(DinodeError::Number(131)));
        let mut torn = b.clone();
        torn[60] ^= 1;
        assert_eq!(parse_dinode(&sb, 131, &torn), Err(DinodeError::Checksum));
        let mut other = sb;
        other.meta_uuid = [8; 16];
        assert_eq!(parse_dinode(&other, 131, &b), Err(DinodeError::Uuid));
        assert_eq!(
            parse_dinode(&sb, 131, &vec![0u8; 512]),
            Err(DinodeError::Magic)
        );
        assert_eq!(
            parse_dinode(&sb, 131, &b[..300]),
            Err(DinodeError::Short(300))
        );
        // Freed when written back (mode 0): its size would be the free core's, not that
        // of the file that has the inode now.
        let free = dinode(&sb, 131, 0, 0);
        assert_eq!(parse_dinode(&sb, 131, &free), Err(DinodeError::Free));
    }

    #[test]
    fn inode_numbers_map_to_their_group_block_and_slot() {
        let sb = geometry();
        // Group 0, block 16, slot 3.
        assert_eq!(sb.inode_offset((16 << 3) | 3), Some(16 * 4096 + 3 * 512));
        // Group 2 starts at block 2 * agblocks, whatever agblklog rounds up to.
        let mut odd = sb;
        odd.agblocks = 100_000;
        let ino = (2u64 << (17 + 3)) | (5 << 3);
        assert_eq!(odd.inode_offset(ino), Some((2 * 100_000 + 5) * 4096));
        assert_eq!(odd.inode_offset(4u64 << 20), None, "no group 4");
        assert_eq!(odd.inode_offset(100_000 << 3), None, "past the group's end");
    }

    #[test]
    fn a_superblock_is_checked_before_it_is_believed() {
        let mut b = vec![0u8; 512];
        b[0..4].copy_from_slice(&SB_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&4096u32.to_be_bytes());
        b[32..48].copy_from_slice(&[9; 16]);
        b[84..88].copy_from_slice(&131072u32.to_be_bytes());
        b[88..92].copy_from_slice(&4u32.to_be_bytes());
        b[100..102].copy_from_slice(&0xb4a5u16.to_be_bytes());
        b[102..104].copy_from_slice(&512u16.to_be_bytes());
        b[104..106].copy_from_slice(&512u16.to_be_bytes());
        b[123] = 3;
        b[124] = 17;
        let seal = |b: &mut Vec<u8>| {
            let c = crc32c_with_hole(b, SB_CRC_OFF);
            b[SB_CRC_OFF..SB_CRC_OFF + 4].copy_from_slice(&c.to_le_bytes());
        };
        seal(&mut b);
        let sb = parse_superblock(&b).unwrap();
        assert_eq!(
            (sb.blocksize, sb.agcount, sb.uuid, sb.meta_uuid),
            (4096, 4, [9; 16], [9; 16])
        );
        let mut meta = b.clone();
        meta[216..220].copy_from_slice(&INCOMPAT_META_UUID.to_be_bytes());
        meta[248..264].copy_from_slice(&[5; 16]);
        seal(&mut meta);
        assert_eq!(parse_superblock(&meta).unwrap().meta_uuid, [5; 16]);
        let mut bad = b.clone();
        bad[90] = 1;
        assert_eq!(parse_superblock(&bad), Err(SuperblockError::Checksum));
        let mut v4 = b.clone();
        v4[100..102].copy_from_slice(&0xb4a4u16.to_be_bytes());
        seal(&mut v4);
        assert_eq!(parse_superblock(&v4), Err(SuperblockError::NotV5(4)));
        let mut geo = b.clone();
        geo[124] = 16; // 2^16 < agblocks
        seal(&mut geo);
        assert!(matches!(
            parse_superblock(&geo),
            Err(SuperblockError::Geometry(_))
        ));
        assert_eq!(
            parse_superblock(&b[..100]),
            Err(SuperblockError::Short(100))
        );
    }
}
