// Package verify checks a patch series before it is posted: the kernel's
// rules for commit messages and style (as scripts/checkpatch.pl has them)
// and C invariants of the series evaluated with modernc.org/cc/v4 (types,
// sizes and macro values for x86_64 and i386, with the series' options on
// and off), at every patch of the series.
//
// A series comes either from the generator (FromGenerated: the tree after
// every step is known exactly) or from posted mail (ReadMail: an mbox, a
// directory of .patch files, or a saved thread such as the seed; created
// files are rebuilt from the patches and edits to existing files applied to
// a tree when one is given).
//
// The rules on function bodies read each C file of the series at each
// patch through verify's C front end, package verify/cunit (cfront.go is
// how they ask), with cc/v4's preprocessor and parser, for x86_64 and
// i386 with the options on and off: the series' headers are served, every
// other kernel header is empty and a prelude stands in for it (noinstr and
// __always_inline as the GNU attributes they are), and of a file the series
// edits only the definitions it touches are given to cc/v4, at their real
// lines. They see storage classes, attributes, parameter types, and the
// calls and identifiers of every body. Given kernel build trees
// (Options.BuildTrees: BuildTrees, DefaultBuildTrees), a C file is read
// instead as the compiler reads it: preprocessed with the compile command
// kbuild recorded for it (or a sibling), the series' files at that patch
// laid over the tree, and the translation unit parsed by cc/v4 with the
// real headers' typedefs; the prelude stays the fallback,
// and the report says per file which reading was used (Report.CRead).
// What the rules read of each such unit is kept between runs
// (Options.PreprocessCache).
//
// Every check is a Rule with a stable ID, a severity and a scope: kernel
// rules apply to every series, series rules (one review's points) only
// when the series' spec declares them in its verify-rules file
// (spec.VerifyRules, NewSeriesRules, Options.Series). Run returns
// Findings, each naming the patch, the file and line (in the tree at that
// patch, or in the mail for message rules), what to do and why reviewers
// care; RunContext stops at Ctrl-C. Report prints them one line each under
// a heading per patch with its counts, repeats folded, or as JSON;
// WriteRules and RulesMarkdown list the rules (kpatch verify --rules,
// docs/verify.md).
//
// Besides its own rules (the text rules as checkpatch.pl reads them, the
// C rules, the analyzers of the field: TYPE_LIMITS and NMI_UNSAFE), verify
// merges into a run's findings what the tree's own tools report:
// Checkpatch runs scripts/checkpatch.pl in tree mode, Coccicheck the
// semantic patches of scripts/coccinelle; a finding both report is given
// once.
package verify
