/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Minimal declarations of the QEMU 10.0 TCG plugin API, written for the
 * locality meter because Debian does not package qemu-plugin.h (neither
 * bookworm's QEMU 7.2 nor bookworm-backports' 10.0).
 *
 * Only what locality.c uses is declared. Signatures follow QEMU 10.0's
 * include/qemu/qemu-plugin.h, API version 4: version 2 dropped the
 * non-per-vCPU inline ops, version 3 made qemu_plugin_insn_data() copy
 * into a caller's buffer, version 4 added qemu_plugin_read_memory_vaddr().
 * Register reads (qemu_plugin_get_registers(), qemu_plugin_read_register())
 * exist since version 2. QEMU 7.2 (version 1) refuses this plugin.
 * The symbols are resolved at load time against the qemu-system-*
 * binary (nm -D --defined-only $(which qemu-system-x86_64) | grep plugin).
 *
 * GLib is not needed to build: the three GLib containers the register and
 * memory reads use are declared below by their public layout, and the
 * two GLib functions called are resolved, like the API, from the QEMU
 * process, which links GLib.
 */
#ifndef LOCALITY_QEMU_PLUGIN_API_H
#define LOCALITY_QEMU_PLUGIN_API_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 4

typedef uint64_t qemu_plugin_id_t;

extern QEMU_PLUGIN_EXPORT int qemu_plugin_version;

typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv);

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};

/* A MemOpIdx-derived 32-bit value, passed by value. */
typedef uint32_t qemu_plugin_meminfo_t;

typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
					  qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
/* Called before the instruction executes (phase markers). */
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw,
				      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
/* Host pointer to the insn bytes in QEMU's RAM mapping; NULL if not RAM. */
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info,
						  uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret);

/* Copies up to @len bytes of the instruction into @dest (version 3 on). */
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
			     size_t len);

/* GLib's public structs (glib/garray.h), as far as the plugin reads them. */
typedef struct {
	char *data;
	unsigned int len;
} GArray;

typedef struct {
	uint8_t *data;
	unsigned int len;
} GByteArray;

GByteArray *g_byte_array_new(void);
GByteArray *g_byte_array_set_size(GByteArray *array, unsigned int length);

struct qemu_plugin_register;

typedef struct {
	struct qemu_plugin_register *handle;
	const char *name;
	const char *feature;
} qemu_plugin_reg_descriptor;

/* From a vCPU init callback: an array of qemu_plugin_reg_descriptor. */
GArray *qemu_plugin_get_registers(void);
/*
 * Appends the register's bytes (target order) to @buf; returns their
 * number or -1. Only from callbacks registered with QEMU_PLUGIN_CB_R_REGS.
 */
int qemu_plugin_read_register(struct qemu_plugin_register *handle,
			      GByteArray *buf);
/* Reads @len bytes at guest virtual @addr through the vCPU's MMU. */
bool qemu_plugin_read_memory_vaddr(uint64_t addr, GByteArray *data, size_t len);

typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id,
					     unsigned int vcpu_index);
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_simple_cb_t cb);

#endif /* LOCALITY_QEMU_PLUGIN_API_H */
