// Package diffstat renders the "--stat" and "--summary" text that git
// prints above a patch (as in git format-patch and git diff --stat
// --summary), reproducing git 2.39's show_stats() and diff_summary()
// byte for byte: the split of the total width between the file-name
// column and the +/- graph, the "..." abbreviation of long names, the
// linear scaling of the graph, the "N files changed, ..." summary with
// git's singular and plural forms, and the create/delete/mode/rename
// lines that follow it.
package diffstat
