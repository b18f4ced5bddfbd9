//! One process's list of the names it created (fsstress's `flist`), with O(1) random
//! picks and O(depth) path building — no directory scans, no linear id lookups.

/// Entry types, in fsstress's order (which fixes how a pick over several types maps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ft {
    Dir = 0,
    Reg = 1,
    Sym = 2,
    Dev = 3,
}

impl Ft {
    const ALL: [Ft; 4] = [Ft::Dir, Ft::Reg, Ft::Sym, Ft::Dev];

    /// fsstress's name prefix: d0, f1, l2, c3.
    fn tag(self) -> char {
        match self {
            Ft::Dir => 'd',
            Ft::Reg => 'f',
            Ft::Sym => 'l',
            Ft::Dev => 'c',
        }
    }

    pub(crate) fn mask(self) -> u8 {
        1 << (self as u8)
    }
}

pub(crate) const DIRS: u8 = 1;
pub(crate) const REGS: u8 = 2;
pub(crate) const NOT_DIR: u8 = 2 | 4 | 8;
pub(crate) const ANY: u8 = 1 | 2 | 4 | 8;

/// A handle on an entry: an index into `NameList::entries`, stable for the entry's life
/// (renames keep it, so the children of a renamed directory need no fix-up).
pub(crate) type Key = u32;

#[derive(Debug, Clone)]
struct Entry {
    ft: Ft,
    /// The number in its name (`f1a` → 0x1a); unique within the run of one process.
    name: u32,
    parent: Option<Key>,
    /// Position in `lists[ft]` while alive.
    slot: u32,
    alive: bool,
}

#[derive(Debug, Default)]
pub(crate) struct NameList {
    entries: Vec<Entry>,
    lists: [Vec<Key>; 4],
    next_name: u32,
    scratch: Vec<Key>,
}

impl NameList {
    /// The next name number (fsstress's `nameseq++`).
    pub(crate) fn new_name(&mut self) -> u32 {
        let n = self.next_name;
        self.next_name = self.next_name.wrapping_add(1);
        n
    }

    pub(crate) fn name_seq(&self) -> u32 {
        self.next_name
    }

    /// A uniformly random live entry among the types in `mask`, chosen by `r`.
    pub(crate) fn pick(&self, mask: u8, r: u64) -> Option<Key> {
        let count: usize = Ft::ALL
            .iter()
            .filter(|ft| mask & ft.mask() != 0)
            .map(|&ft| self.lists[ft as usize].len())
            .sum();
        if count == 0 {
            return None;
        }
        let mut x = (r % count as u64) as usize;
        for ft in Ft::ALL {
            if mask & ft.mask() == 0 {
                continue;
            }
            let list = &self.lists[ft as usize];
            if x < list.len() {
                return Some(list[x]);
            }
            x -= list.len();
        }
        None
    }

    pub(crate) fn ft(&self, key: Key) -> Ft {
        self.entries[key as usize].ft
    }

    pub(crate) fn add(&mut self, ft: Ft, name: u32, parent: Option<Key>) -> Key {
        let key = self.entries.len() as Key;
        let list = &mut self.lists[ft as usize];
        self.entries.push(Entry {
            ft,
            name,
            parent,
            slot: list.len() as u32,
            alive: true,
        });
        list.push(key);
        key
    }

    /// Drop an entry from its type list (swap-remove, as fsstress's `del_from_flist`).
    pub(crate) fn remove(&mut self, key: Key) {
        let Some(e) = self.entries.get_mut(key as usize) else {
            return;
        };
        if !e.alive {
            return;
        }
        e.alive = false;
        let (ft, slot) = (e.ft, e.slot as usize);
        let list = &mut self.lists[ft as usize];
        list.swap_remove(slot);
        if let Some(&moved) = list.get(slot) {
            self.entries[moved as usize].slot = slot as u32;
        }
    }

    /// After a successful rename: new name and parent; the entry moves to the end of its
    /// list like fsstress's delete + add.
    pub(crate) fn renamed(&mut self, key: Key, name: u32, parent: Option<Key>) {
        self.remove(key);
        let e = &mut self.entries[key as usize];
        e.name = name;
        e.parent = parent;
        e.alive = true;
        let list = &mut self.lists[e.ft as usize];
        e.slot = list.len() as u32;
        list.push(key);
    }

    /// The path of `key` relative to the process directory, into `out` (cleared first).
    pub(crate) fn path(&mut self, key: Key, out: &mut String) {
        out.clear();
        self.scratch.clear();
        let mut cur = Some(key);
        // A chain longer than the list would be a cycle: impossible, but never loop.
        while let Some(k) = cur {
            if self.scratch.len() > self.entries.len() {
                break;
            }
            self.scratch.push(k);
            cur = self.entries.get(k as usize).and_then(|e| e.parent);
        }
        for (i, &k) in self.scratch.iter().rev().enumerate() {
            if i > 0 {
                out.push('/');
            }
            let e = &self.entries[k as usize];
            push_name(out, e.ft, e.name);
        }
    }

    /// The path a new entry `ft`/`name` would have under `parent` (the root when `None`).
    pub(crate) fn child_path(&mut self, parent: Option<Key>, ft: Ft, name: u32, out: &mut String) {
        match parent {
            Some(p) => {
                self.path(p, out);
                out.push('/');
            }
            None => out.clear(),
        }
        push_name(out, ft, name);
    }

    #[cfg(test)]
    pub(crate) fn live(&self, ft: Ft) -> usize {
        self.lists[ft as usize].len()
    }
}

/// `tag` + lower-case hex, without the formatting machinery (this runs once per path
/// component of every operation).
fn push_name(out: &mut String, ft: Ft, name: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(ft.tag());
    let mut digits = [0u8; 8];
    let mut n = name;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = HEX[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(d as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_renamed_parents() {
        let mut t = NameList::default();
        let n0 = t.new_name();
        let d0 = t.add(Ft::Dir, n0, None);
        let n1 = t.new_name();
        let d1 = t.add(Ft::Dir, n1, Some(d0));
        let n2 = t.new_name();
        let f2 = t.add(Ft::Reg, n2, Some(d1));
        let mut p = String::new();
        t.path(f2, &mut p);
        assert_eq!(p, "d0/d1/f2");
        // d1 renamed to the root as d1f: its child follows with no fix-up.
        t.renamed(d1, 0x1f, None);
        t.path(f2, &mut p);
        assert_eq!(p, "d1f/f2");
        t.child_path(Some(d0), Ft::Dev, 0xab, &mut p);
        assert_eq!(p, "d0/cab");
        t.child_path(None, Ft::Sym, 3, &mut p);
        assert_eq!(p, "l3");
        t.child_path(None, Ft::Reg, 0, &mut p);
        assert_eq!(p, "f0");
        t.child_path(None, Ft::Reg, u32::MAX, &mut p);
        assert_eq!(p, "fffffffff");
    }

    #[test]
    fn pick_and_remove_keep_lists_consistent() {
        let mut t = NameList::default();
        let keys: Vec<Key> = (0..10)
            .map(|i| {
                let ft = if i % 2 == 0 { Ft::Reg } else { Ft::Dev };
                let n = t.new_name();
                t.add(ft, n, None)
            })
            .collect();
        assert_eq!(t.pick(DIRS, 7), None);
        // NOT_DIR picks walk Reg then Dev: index 5 → the first Dev.
        assert_eq!(t.pick(NOT_DIR, 5), Some(keys[1]));
        t.remove(keys[0]);
        t.remove(keys[0]); // twice is harmless
        assert_eq!(t.live(Ft::Reg), 4);
        for r in 0..100 {
            let k = t.pick(ANY, r).unwrap();
            assert_ne!(k, keys[0]);
        }
        // Every live key is reachable by some r.
        let mut seen: Vec<Key> = (0..9).map(|r| t.pick(ANY, r).unwrap()).collect();
        seen.sort();
        let mut want: Vec<Key> = keys[1..].to_vec();
        want.sort();
        assert_eq!(seen, want);
        assert_eq!(t.ft(keys[1]), Ft::Dev);
        assert_eq!(t.pick(REGS, 0).map(|k| t.ft(k)), Some(Ft::Reg));
    }
}
