use super::*;

/// A reply that quotes the script of an earlier message (QP-encoded), with a
/// before/after table of its own: the quoted script is the experiment.
#[test]
fn reply_quoting_a_script_with_a_table() {
    let mail = "From: A Dev <a@example.org>\nSubject: Re: [PATCH v2] ext4: faster unlink\nDate: Tue, 4 Jun 2024 15:09:01 +0800\nMessage-ID: <x@y>\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nOn Mon, Jun 03, 2024 at 10:00:00AM +0000, B Dev wrote:\n> I ran this on a 500G SSD:\n>\n> # mkfs.ext4 -F -b 4096 /dev/nvme0n1p2\n> # mount -o noatime /dev/nvme0n1p2 /mnt/test\n> # for ((i=3D0;i<5;i++)); do time fs_mark -d /mnt/test/d -n 10000 -s 4096 -t 4; =\ndone\n\nI see this:\n\n              before     after\nunlink        12.5s      10.0s\ncreate        30.25s     29.0s\n\nwhich is about a 20% improvement for unlink and no obvious downgrade elsewhere.\n";
    let d = import(mail.as_bytes(), Some("reply.eml")).unwrap();
    let yaml = d.yaml.as_deref().expect("a draft");
    let exp = crate::spec::Experiment::from_str_named(yaml, "d.yaml").unwrap();
    assert_eq!(d.id, "ext4-faster-unlink");
    let w = format!("{:?}", exp.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -d {{mnt}}/d -n 10000 -s 4096 -t 4"),
        "{w}"
    );
    assert!(format!("{:?}", exp.def.workload.repeat).contains('5'));
    assert!(
        yaml.contains("{ size: \"500GB\" }") || yaml.contains("\"500GiB\""),
        "{yaml}"
    );
    // table cells with their lines (the QP soft break joined lines 13–14)
    let cell = d.rows.iter().find(|r| r.printed == "10.0s").unwrap();
    assert_eq!((cell.line, cell.unit.as_str()), (19, "s"));
    assert_eq!(
        cell.settings,
        [
            ("row".to_string(), "unlink".to_string()),
            ("column".to_string(), "after".to_string())
        ]
    );
    let mkfs_b = d.rows.iter().find(|r| r.quantity == "block_size").unwrap();
    assert_eq!(
        (mkfs_b.line, mkfs_b.stated_by.as_deref()),
        (11, Some("B Dev"))
    );
    assert!(d
        .claims
        .iter()
        .any(|c| c.quote.contains("no obvious downgrade") && c.line == 22));
    assert!(exp.def.claims.iter().all(|c| c.draft));
}
