// SPDX-License-Identifier: GPL-2.0
/*
 * peercgroup: the cgroup of an AF_UNIX peer, fixed at connect time.
 *
 * Module life: tables, then hooks (recording starts), then the device
 * (answers start); torn down in reverse.  An open /dev/peercgroup pins
 * the module, so no query is in flight once exit begins.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sysfs.h>

#include <linux/peercgroup.h>

#include "peercgroup.h"

DEFINE_PER_CPU(struct pcg_stats, pcg_stats);

/* A counter file and where its per-CPU count lives in struct pcg_stats. */
struct pcg_counter_attr {
	struct kobj_attribute kattr;
	size_t offset;
};

static ssize_t pcg_counter_show(struct kobject *kobj,
				struct kobj_attribute *kattr, char *buf)
{
	size_t offset = container_of(kattr, struct pcg_counter_attr, kattr)->offset;
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(unsigned long *)((char *)per_cpu_ptr(&pcg_stats, cpu) + offset);
	return sysfs_emit(buf, "%lu\n", sum);
}

/*
 * Records in the tables now; those removed but still waiting for their
 * RCU grace period are not live, and count as freed once it has passed.
 */
static ssize_t live_show(struct kobject *kobj, struct kobj_attribute *kattr,
			 char *buf)
{
	return sysfs_emit(buf, "%ld\n", pcg_peers_live() + pcg_listeners_live());
}

/* listen() calls the return probe could not follow (then no listener answers). */
static ssize_t listen_probe_missed_show(struct kobject *kobj,
					struct kobj_attribute *kattr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", pcg_listen_probe_missed());
}

static struct kobj_attribute pcg_live_attr = __ATTR_RO_MODE(live, 0400);
static struct kobj_attribute pcg_missed_attr = __ATTR_RO_MODE(listen_probe_missed, 0400);

static struct pcg_counter_attr pcg_counter_attrs[] = {
	{ __ATTR(recorded, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, recorded) },
	{ __ATTR(freed, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, freed) },
	{ __ATTR(alloc_failures, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, alloc_failures) },
	{ __ATTR(insert_failures, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, insert_failures) },
	{ __ATTR(cgroup_busy, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, cgroup_busy) },
	{ __ATTR(listener_unknown, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, listener_unknown) },
	{ __ATTR(queries, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, queries) },
	{ __ATTR(misses, 0400, pcg_counter_show, NULL),
	  offsetof(struct pcg_stats, misses) },
};

/* Every field of struct pcg_stats has its file. */
#define PCG_COUNTERS (sizeof(struct pcg_stats) / sizeof(unsigned long))

static struct attribute *pcg_counter_files[PCG_COUNTERS + 3];

static const struct attribute_group pcg_counter_group = {
	.attrs = pcg_counter_files,
};

/*
 * /sys/module/peercgroup/counters/, readable by root only.  A kobject of
 * its own: the module's kobject speaks module_attribute, not kobj_attribute.
 */
static struct kobject *pcg_counter_kobj;

static int pcg_counters_register(void)
{
	int err, i;

	BUILD_BUG_ON(ARRAY_SIZE(pcg_counter_attrs) != PCG_COUNTERS);
	for (i = 0; i < ARRAY_SIZE(pcg_counter_attrs); i++)
		pcg_counter_files[i] = &pcg_counter_attrs[i].kattr.attr;
	pcg_counter_files[i++] = &pcg_live_attr.attr;
	pcg_counter_files[i++] = &pcg_missed_attr.attr;
	pcg_counter_files[i] = NULL;

	pcg_counter_kobj = kobject_create_and_add("counters", &THIS_MODULE->mkobj.kobj);
	if (!pcg_counter_kobj)
		return -ENOMEM;
	err = sysfs_create_group(pcg_counter_kobj, &pcg_counter_group);
	if (err)
		kobject_put(pcg_counter_kobj);
	return err;
}

static void pcg_counters_unregister(void)
{
	sysfs_remove_group(pcg_counter_kobj, &pcg_counter_group);
	kobject_put(pcg_counter_kobj);
}

/*
 * A hook ftrace would not take back (it refuses every change once a bug
 * has made it disable itself, yet leaves the patched calls calling) runs
 * this module's code on its tables for as long as the kernel runs.  The
 * loader frees the module once its exit returns, and exit cannot fail:
 * so it never returns.  rmmod waits for good, idle (TASK_IDLE: no load,
 * no hung-task report), and the module stays "going".
 */
static void __noreturn pcg_stay_resident(void)
{
	pr_crit("ftrace keeps a hook of this module: it stays in memory until reboot\n");
	for (;;)
		schedule_timeout_idle(MAX_SCHEDULE_TIMEOUT);
}

static int __init pcg_init(void)
{
	int err;

	err = pcg_peers_init();
	if (err)
		return err;
	err = pcg_listeners_init();
	if (err)
		goto err_peers;
	err = pcg_hooks_register();
	if (err)
		goto err_hooks_failed;
	err = pcg_dev_register();
	if (err)
		goto err_hooks;
	err = pcg_counters_register();
	if (err)
		goto err_dev;
	pr_info("version %s loaded; connections made from now on are answered\n",
		PEERCGROUP_VERSION);
	return 0;

err_dev:
	pcg_dev_unregister();
err_hooks:
	pcg_hooks_unregister();
err_hooks_failed:
	if (pcg_hooks_left_behind()) {
		/* Freeing the module would free code ftrace still calls. */
		pr_crit("loaded without its device (%d): a hook could not be taken back\n",
			err);
		return 0;
	}
	pcg_listeners_destroy();
err_peers:
	pcg_peers_destroy();
	return err;
}

static void __exit pcg_exit(void)
{
	if (pcg_hooks_left_behind())	/* since pcg_init() */
		pcg_stay_resident();
	pcg_counters_unregister();
	pcg_dev_unregister();
	if (pcg_hooks_unregister())
		pcg_stay_resident();
	pcg_listeners_destroy();
	pcg_peers_destroy();
}

module_init(pcg_init);
module_exit(pcg_exit);

MODULE_DESCRIPTION("cgroup of an AF_UNIX peer, fixed at connect time");
MODULE_LICENSE("GPL");
MODULE_VERSION(PEERCGROUP_VERSION);
MODULE_ALIAS_MISCDEV(PEERCGROUP_MISC_MINOR);
MODULE_ALIAS("devname:" PEERCGROUP_DEVICE_NAME);
