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
#include <linux/sysfs.h>

#include <linux/peercgroup.h>

#include "peercgroup.h"

DEFINE_PER_CPU(struct pcg_stats, pcg_stats);

static unsigned long pcg_stat_sum(size_t offset)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(unsigned long *)((char *)per_cpu_ptr(&pcg_stats, cpu) + offset);
	return sum;
}

#define PCG_STAT(field) pcg_stat_sum(offsetof(struct pcg_stats, field))

/* Entries in the tables now; those removed but still waiting for their
 * RCU grace period count as freed only once it has passed.
 */
static ssize_t live_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&pcg_peers.nelems) +
			  atomic_read(&pcg_listeners.nelems));
}

#define PCG_STAT_ATTR(field)						\
static ssize_t field##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lu\n", PCG_STAT(field));		\
}									\
static struct kobj_attribute pcg_attr_##field = __ATTR_RO_MODE(field, 0400)

static struct kobj_attribute pcg_attr_live = __ATTR_RO_MODE(live, 0400);
PCG_STAT_ATTR(recorded);
PCG_STAT_ATTR(freed);
PCG_STAT_ATTR(alloc_failures);
PCG_STAT_ATTR(queries);
PCG_STAT_ATTR(misses);

static struct attribute *pcg_counter_attrs[] = {
	&pcg_attr_live.attr,
	&pcg_attr_recorded.attr,
	&pcg_attr_freed.attr,
	&pcg_attr_alloc_failures.attr,
	&pcg_attr_queries.attr,
	&pcg_attr_misses.attr,
	NULL,
};

/* /sys/module/peercgroup/counters/, readable by root only. */
static const struct attribute_group pcg_counter_group = {
	.name = "counters",
	.attrs = pcg_counter_attrs,
};

static int __init pcg_init(void)
{
	int err;

	err = pcg_tables_init();
	if (err)
		return err;
	err = pcg_hooks_register();
	if (err)
		goto err_tables;
	err = pcg_dev_register();
	if (err)
		goto err_hooks;
	err = sysfs_create_group(&THIS_MODULE->mkobj.kobj, &pcg_counter_group);
	if (err)
		goto err_dev;
	pr_info("version %s loaded; connections made from now on are answered\n",
		PEERCGROUP_VERSION);
	return 0;

err_dev:
	pcg_dev_unregister();
err_hooks:
	pcg_hooks_unregister();
err_tables:
	pcg_tables_destroy();
	return err;
}

static void __exit pcg_exit(void)
{
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &pcg_counter_group);
	pcg_dev_unregister();
	pcg_hooks_unregister();
	pcg_tables_destroy();
}

module_init(pcg_init);
module_exit(pcg_exit);

MODULE_DESCRIPTION("cgroup of an AF_UNIX peer, fixed at connect time");
MODULE_LICENSE("GPL");
MODULE_VERSION(PEERCGROUP_VERSION);
MODULE_ALIAS_MISCDEV(PEERCGROUP_MISC_MINOR);
MODULE_ALIAS("devname:" PEERCGROUP_DEVICE_NAME);
