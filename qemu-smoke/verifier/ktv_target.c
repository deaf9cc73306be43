// SPDX-License-Identifier: GPL-2.0
/*
 * ktv_target: a module for ktext_verify to look at. It has text that is
 * patched at run time (a static key and a static call), a read-only table
 * of more than three pages and a few pages of ordinary text.
 *
 *   /sys/kernel/debug/ktv_target/flip    write N: toggle the key and
 *                                        switch the call N times
 *   /sys/kernel/debug/ktv_target/check   read: run the patched code,
 *                                        "key=0|1 call=a|b table_sum=S"
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/static_call.h>
#include <linux/uaccess.h>

#define KTV_TABLE_SIZE	(3 * PAGE_SIZE + 123)

/* Each page of the table has its own fill, the tail another one. */
static const u8 ktv_table[KTV_TABLE_SIZE] = {
	[0 ... PAGE_SIZE - 1] = 0x5a,
	[PAGE_SIZE ... 2 * PAGE_SIZE - 1] = 0xa5,
	[2 * PAGE_SIZE ... 3 * PAGE_SIZE - 1] = 0x3c,
	[3 * PAGE_SIZE ... KTV_TABLE_SIZE - 1] = 0xc3,
};

#define KTV_TABLE_SUM	(PAGE_SIZE * (0x5a + 0xa5 + 0x3c) + 123 * 0xc3)

static DEFINE_STATIC_KEY_FALSE(ktv_key);
static DEFINE_MUTEX(ktv_lock);
static unsigned long ktv_flips;

static noinline int ktv_call_a(void)
{
	return 'a';
}

static noinline int ktv_call_b(void)
{
	return 'b';
}

DEFINE_STATIC_CALL(ktv_call, ktv_call_a);

static noinline int ktv_key_branch(void)
{
	if (static_branch_unlikely(&ktv_key))
		return 1;
	return 0;
}

static noinline unsigned long ktv_table_sum(void)
{
	const u8 *p = ktv_table;
	unsigned long sum = 0;
	size_t i;

	/* Read the table at run time: no folding of the sum at build time. */
	OPTIMIZER_HIDE_VAR(p);
	for (i = 0; i < KTV_TABLE_SIZE; i++)
		sum += p[i];
	return sum;
}

/*
 * A few pages of ordinary text: distinct functions that mix a value, all
 * called by ktv_mix(), so that the module's text is more than a page.
 */
static __always_inline u32 ktv_round(u32 x, const u32 n)
{
	u32 i;

	for (i = 0; i < n + 3; i++) {
		x ^= x << (n % 13 + 1);
		x += 0x9e3779b9u * (n + 1) + i;
		x ^= x >> (n % 7 + 3);
		x = (x * (2 * n + 1)) ^ (n << 8);
	}
	for (i = 0; i < n % 5 + 2; i++) {
		x = ror32(x, n % 31 + 1) * (0x85ebca6bu + n);
		x ^= (x >> 16) + n * 0xc2b2ae35u;
		x = rol32(x ^ i, (n + i) % 29 + 1) - n;
	}
	return x;
}

#define KTV_FN(n)							\
static noinline u32 ktv_fn_##n(u32 x)					\
{									\
	return ktv_round(x, n);						\
}

KTV_FN(1)
KTV_FN(2)
KTV_FN(3)
KTV_FN(4)
KTV_FN(5)
KTV_FN(6)
KTV_FN(7)
KTV_FN(8)
KTV_FN(9)
KTV_FN(10)
KTV_FN(11)
KTV_FN(12)
KTV_FN(13)
KTV_FN(14)
KTV_FN(15)
KTV_FN(16)
KTV_FN(17)
KTV_FN(18)
KTV_FN(19)
KTV_FN(20)
KTV_FN(21)
KTV_FN(22)
KTV_FN(23)
KTV_FN(24)
KTV_FN(25)
KTV_FN(26)
KTV_FN(27)
KTV_FN(28)
KTV_FN(29)
KTV_FN(30)
KTV_FN(31)
KTV_FN(32)
KTV_FN(33)
KTV_FN(34)
KTV_FN(35)
KTV_FN(36)
KTV_FN(37)
KTV_FN(38)
KTV_FN(39)
KTV_FN(40)
KTV_FN(41)
KTV_FN(42)
KTV_FN(43)
KTV_FN(44)
KTV_FN(45)
KTV_FN(46)
KTV_FN(47)
KTV_FN(48)

static u32 (* const ktv_fns[])(u32) = {
	ktv_fn_1, ktv_fn_2, ktv_fn_3, ktv_fn_4, ktv_fn_5, ktv_fn_6, ktv_fn_7,
	ktv_fn_8, ktv_fn_9, ktv_fn_10, ktv_fn_11, ktv_fn_12, ktv_fn_13,
	ktv_fn_14, ktv_fn_15, ktv_fn_16, ktv_fn_17, ktv_fn_18, ktv_fn_19,
	ktv_fn_20, ktv_fn_21, ktv_fn_22, ktv_fn_23, ktv_fn_24, ktv_fn_25,
	ktv_fn_26, ktv_fn_27, ktv_fn_28, ktv_fn_29, ktv_fn_30, ktv_fn_31,
	ktv_fn_32, ktv_fn_33, ktv_fn_34, ktv_fn_35, ktv_fn_36, ktv_fn_37,
	ktv_fn_38, ktv_fn_39, ktv_fn_40, ktv_fn_41, ktv_fn_42, ktv_fn_43,
	ktv_fn_44, ktv_fn_45, ktv_fn_46, ktv_fn_47, ktv_fn_48,
};

static noinline u32 ktv_mix(u32 x)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ktv_fns); i++)
		x = ktv_fns[i](x);
	return x;
}

/*
 * A kprobe target: a probe past its ftrace call gets a kprobe instruction
 * slot (and an optprobe slot once optimized), in the module area. Reading
 * "check" calls it.
 */
static unsigned long ktv_probe_calls;

static noinline __noclone unsigned long ktv_probe_me(unsigned long x)
{
	barrier();
	return x + 1;
}

static int ktv_check_show(struct seq_file *m, void *v)
{
	int key, call;

	WRITE_ONCE(ktv_probe_calls, ktv_probe_me(READ_ONCE(ktv_probe_calls)));
	mutex_lock(&ktv_lock);
	key = ktv_key_branch();
	call = static_call(ktv_call)();
	mutex_unlock(&ktv_lock);
	seq_printf(m, "key=%d call=%c table_sum=%lu\n", key, call,
		   ktv_table_sum());
	return 0;
}

static int ktv_check_open(struct inode *inode, struct file *file)
{
	return single_open(file, ktv_check_show, NULL);
}

static const struct file_operations ktv_check_fops = {
	.owner		= THIS_MODULE,
	.open		= ktv_check_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* One flip: the key and the call change together (key=1 with call=b). */
static void ktv_flip_once(void)
{
	if (static_key_enabled(&ktv_key)) {
		static_branch_disable(&ktv_key);
		static_call_update(ktv_call, ktv_call_a);
	} else {
		static_branch_enable(&ktv_key);
		static_call_update(ktv_call, ktv_call_b);
	}
	ktv_flips++;
}

static ssize_t ktv_flip_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned int n, i;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &n);
	if (ret)
		return ret;
	if (n > 1000000)
		return -EINVAL;
	mutex_lock(&ktv_lock);
	for (i = 0; i < n; i++) {
		ktv_flip_once();
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	mutex_unlock(&ktv_lock);
	return count;
}

static ssize_t ktv_flip_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char buf[32];
	int len;

	len = scnprintf(buf, sizeof(buf), "%lu\n", READ_ONCE(ktv_flips));
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations ktv_flip_fops = {
	.owner		= THIS_MODULE,
	.write		= ktv_flip_write,
	.read		= ktv_flip_read,
	.llseek		= default_llseek,
};

static struct dentry *ktv_dir;

static int __init ktv_init(void)
{
	unsigned long sum = ktv_table_sum();

	if (sum != KTV_TABLE_SUM) {
		pr_err("table sum %lu, want %lu\n", sum, KTV_TABLE_SUM);
		return -EINVAL;
	}
	ktv_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(ktv_dir))
		return PTR_ERR(ktv_dir);
	debugfs_create_file("flip", 0600, ktv_dir, NULL, &ktv_flip_fops);
	debugfs_create_file("check", 0400, ktv_dir, NULL, &ktv_check_fops);
	pr_info("loaded, table %zu bytes, mix %08x\n", sizeof(ktv_table),
		ktv_mix(1));
	return 0;
}

static void __exit ktv_exit(void)
{
	debugfs_remove_recursive(ktv_dir);
}

module_init(ktv_init);
module_exit(ktv_exit);
MODULE_DESCRIPTION("Patched text and rodata for ktext_verify");
MODULE_LICENSE("GPL");
