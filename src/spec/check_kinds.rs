//! Each kind of check's written form ([`CheckSchema`]), one impl per kind, for the checks
//! made when an experiment is loaded. How each kind is measured is
//! `analysis::claims::kinds`.

use super::claim::{
    CheckError, CheckSchema, Expect, FirstVsRestCheck, FlatCheck, GapShareCheck, IoSummaryCheck,
    LayoutCheck, RatioCheck, Selection,
};

/// The column a check on `table` reads from the `runs` table, if it is that table.
fn runs_column<'a>(table: &str, metric: &'a str) -> Option<&'a str> {
    (table == "runs").then_some(metric)
}

impl CheckSchema for RatioCheck {
    fn name(&self) -> &'static str {
        "ratio"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![
            ("numerator", &self.numerator),
            ("denominator", &self.denominator),
        ]
    }
    fn runs_metric(&self) -> Option<&str> {
        runs_column(&self.table, &self.metric)
    }
    fn same_sides(&self) -> bool {
        self.numerator == self.denominator
    }
}

impl CheckSchema for FirstVsRestCheck {
    fn name(&self) -> &'static str {
        "first_vs_rest"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![("select", &self.select)]
    }
    fn runs_metric(&self) -> Option<&str> {
        runs_column(&self.table, &self.metric)
    }
}

impl CheckSchema for FlatCheck {
    fn name(&self) -> &'static str {
        "flat"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![("select", &self.select)]
    }
    fn runs_metric(&self) -> Option<&str> {
        runs_column(&self.table, &self.metric)
    }
}

impl CheckSchema for LayoutCheck {
    fn name(&self) -> &'static str {
        "layout"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![("select", &self.select)]
    }
}

impl CheckSchema for IoSummaryCheck {
    fn name(&self) -> &'static str {
        "io_summary"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        [
            ("select", &self.select),
            ("numerator", &self.numerator),
            ("denominator", &self.denominator),
        ]
        .into_iter()
        .filter_map(|(k, s)| s.as_ref().map(|s| (k, s)))
        .collect()
    }
    fn validate(&self) -> Result<(), CheckError> {
        self.shape().map_err(CheckError::IoShape)
    }
    fn same_sides(&self) -> bool {
        self.numerator.is_some() && self.numerator == self.denominator
    }
}

impl CheckSchema for GapShareCheck {
    fn name(&self) -> &'static str {
        "gap_share"
    }
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![
            ("a", &self.a),
            ("b", &self.b),
            ("part", &self.part),
            ("whole", &self.whole),
        ]
    }
}
