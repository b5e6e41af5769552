// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import "strconv"

// classificationColumns: a Container as the columns of classify.tsv.
func classificationColumns(c Container) map[string]string {
	return map[string]string{
		"valid":   "yes",
		"runtime": c.Runtime.String(),
		"id":      dash(c.ID),
		"pod":     dash(c.Pod),
		"qos":     dash(c.QoS),
		"uid":     strconv.FormatInt(c.UID, 10),
		"flags":   c.Flags.String(),
	}
}
