//! `kind: ratio`: `stat(metric)` over the rows matching `numerator` ÷ the same over
//! `denominator`, with the replicate as the unit.

use super::{ClaimKind, Stated};
use crate::analysis::claims::error::MeasureError;
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::measure::ratio_of_sides;
use crate::analysis::claims::select::{
    explain_empty, incomplete_points, published_selected, sel_label, selected_rows,
};
use crate::analysis::claims::units::{side, Side};
use crate::analysis::claims::words::{num, stat_name};
use crate::analysis::tiers::DEFAULT_MIN_REPLICATES;
use crate::spec::claim::{PublishedRatio, RatioCheck, Selection};

impl ClaimKind for RatioCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: &self.unit,
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        measure_ratio(self, ev)
    }

    fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        self.published.as_ref().map(|p| published_ratio(p, ev))
    }
}

fn measure_ratio(c: &RatioCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let what = format!("the `{}` table", c.table);
    let num_rows = selected_rows(ev, &c.table, &c.numerator)?;
    let den_rows = selected_rows(ev, &c.table, &c.denominator)?;
    let n = side(&num_rows, &c.metric, c.stat, &what)?;
    let d = side(&den_rows, &c.metric, c.stat, &what)?;
    if n.rows.is_empty() {
        return Err(explain_empty(ev, &c.table, &c.numerator));
    }
    if d.rows.is_empty() {
        return Err(explain_empty(ev, &c.table, &c.denominator));
    }
    let r = ratio_of_sides(&n, &d, c.stat, &sel_label(&c.denominator), ev.level())?;
    let mut incomplete = incomplete_points(ev, &c.table, &c.numerator);
    for p in incomplete_points(ev, &c.table, &c.denominator) {
        if !incomplete.contains(&p) {
            incomplete.push(p);
        }
    }
    let line = |sel: &Selection, s: &Side, x: f64| {
        format!(
            "{} of {} over {}: {} ({} replicates, {} rows)",
            stat_name(c.stat),
            c.metric,
            sel_label(sel),
            num(x),
            s.replicates(),
            s.rows.len()
        )
    };
    let recipe = format!(
        "`{}` rows {} ÷ rows {}; {}",
        c.table,
        sel_label(&c.numerator),
        sel_label(&c.denominator),
        r.recipe(c.stat, &c.metric)
    );
    Ok(Measure {
        value: r.value,
        recipe,
        interval: r.interval,
        replication: r.replication,
        min_replicates: c.min_replicates.unwrap_or(DEFAULT_MIN_REPLICATES),
        incomplete,
        details: vec![
            line(&c.numerator, &n, r.sides.0),
            line(&c.denominator, &d, r.sides.1),
        ],
    })
}

fn published_ratio(p: &PublishedRatio, ev: &Evidence) -> Result<f64, MeasureError> {
    let n = published_selected(ev, &p.dataset, &p.metric, &p.numerator)?;
    let d = published_selected(ev, &p.dataset, &p.metric, &p.denominator)?;
    match (p.stat.apply(&n), p.stat.apply(&d)) {
        (Some(n), Some(d)) if d != 0.0 => Ok(n / d),
        _ => Err(MeasureError::NoNumber(
            "the published denominator is 0 or empty".into(),
        )),
    }
}
