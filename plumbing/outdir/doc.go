// Package outdir is kpatch's one writer of outputs that must change all
// at once or not at all, whatever happens (an error, Ctrl-C, a kill):
//
//   - Write replaces the series in an output directory (kpatch gen -o);
//   - Create makes a new directory (kpatch spec -o, series import -o,
//     revision new, the cached kernel tree);
//   - ReplaceFiles changes several files of a directory in place (kpatch
//     trailers on a spec copy), through a journal that Recover completes
//     or clears after a killed run;
//   - WriteFile replaces one file (unwind --write-snapshot, build state);
//   - Lock and LockEdit serialize runs: a second run waits, saying so,
//     until its context ends.
//
// Write works so that, whatever happens, DIR holds one complete series:
// the previous one or the new one, never a mix.
//
// The new series is written into a fresh sibling directory
// (.DIR.kpatch-new-XXXX, beside DIR), and swapped in with one
// renameat2(RENAME_EXCHANGE); the old directory, now at the temporary name,
// is then removed. On a file system without RENAME_EXCHANGE the old
// directory is first renamed aside (.DIR.kpatch-old-XXXX) and the new one
// renamed in; a run killed between the two leaves DIR missing and the old
// series aside, and the next run puts it back before it does anything else.
// Files are not fsynced (git format-patch does not either; under a busy
// disk fifteen fsyncs cost seconds): the guarantee holds for errors and
// killed runs, not for a power loss.
//
// Each run holds an flock on the parent directory while it works (a
// second run waits, saying so on Options.Wait, until Options.Context is
// done) and
// removes the temporary directories of earlier runs that were killed, and
// the .kpatch-*.tmp files older kpatch versions left inside DIR.
//
// DIR is expected to hold series files only, named as kpatch names them
// (vN-NNNN-*.patch, the cover letter included): those of earlier runs are
// dropped, so that an old v11-0015-*.patch is never mailed with a new
// 14-patch series. Any other file is refused unless Options.Keep is set, in
// which case it is carried over into the new directory (hard-linked, or
// copied), as git format-patch users who keep notes beside the patches
// expect.
package outdir
