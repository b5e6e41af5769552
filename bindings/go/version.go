// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

// Version of this package: the project's one VERSION file.  Go modules
// cannot embed a file outside their directory, so it is written here
// again; TestVersionMatchesProject fails when the two differ.
const Version = "0.2.0"
