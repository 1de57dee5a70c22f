// Package sendemail sends mail files with the real git send-email, as b4
// send and a maintainer do, and reads back what it sent: each message's
// Message-Id, Date, subject and envelope recipients, from the log git
// send-email prints for every message ("OK. Log says:", "Dry-OK. Log
// says:" under --dry-run).
//
// The files are sent as they are: git send-email keeps their Message-Id
// and threading headers (--no-thread), and takes the recipients from
// their To: and Cc: headers, the To/Cc given, and the classes of
// automatic Cc it has (the author, the trailers of the body, a --cc-cmd)
// that Options.SuppressCc does not leave out. Everything else,
// the SMTP server, its port and encryption, the user's credentials, comes
// from git's configuration (sendemail.*) unless Options says otherwise.
// git send-email sets each message's Date itself, the first message's a
// second per message before it sends them and each next one a second
// later.
package sendemail
