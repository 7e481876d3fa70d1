use super::Scroll;

fn scroll(top: usize, len: usize, visible: usize) -> Scroll {
    Scroll { top, len, visible }
}

#[test]
fn fit_clamps_top_when_the_view_grows_or_the_list_shrinks() {
    let mut s = scroll(8, 10, 2);
    assert_eq!(s.fit(10, 5).top, 5);
    assert_eq!(s.fit(3, 5).top, 0);
    assert!(!s.more_below() && !s.more_above());
}

#[test]
fn by_stops_at_both_ends() {
    let mut s = scroll(0, 10, 4);
    s.by(-3);
    assert_eq!(s.top, 0);
    s.by(100);
    assert_eq!(s.top, 6);
    assert!(!s.more_below() && s.more_above());
    s.by(-2);
    assert_eq!(s.top, 4);
    assert!(s.more_below());
}

#[test]
fn page_keeps_one_row_of_context_and_reaches_the_end() {
    let mut s = scroll(0, 10, 4);
    s.page(true);
    assert_eq!(s.top, 3);
    s.page(true);
    assert_eq!(s.top, 6);
    s.page(true);
    assert_eq!(s.top, 6);
    s.page(false);
    assert_eq!(s.top, 3);
    // A one-row view still moves.
    let mut one = scroll(0, 3, 1);
    one.page(true);
    assert_eq!(one.top, 1);
}

#[test]
fn show_scrolls_the_least_that_brings_a_row_into_view() {
    let mut s = scroll(0, 20, 5);
    s.show(3);
    assert_eq!(s.top, 0);
    s.show(7);
    assert_eq!(s.top, 3);
    s.show(1);
    assert_eq!(s.top, 1);
    s.show(19);
    assert_eq!(s.top, 15);
}

#[test]
fn row_at_maps_view_rows_to_list_rows() {
    let s = scroll(4, 6, 3);
    assert_eq!(s.row_at(0), Some(4));
    assert_eq!(s.row_at(1), Some(5));
    assert_eq!(s.row_at(2), None);
    assert_eq!(s.row_at(3), None);
}
