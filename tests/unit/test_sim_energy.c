/*
 * test_sim_energy.c: the energy model of docs/sim.md 4: per bit per hop,
 * the link, router and static terms, router ports.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_sim.h"

/* Energy: bits times hops times energy per bit, in both modes. */
void
test_energy(void)
{
	Hand x;
	hand_init(&x, 4, 4096);
	hand_msg(&x, 0, 0, 3, 1, 1, 0, NULL);
	SimResult r = hand_run(&x, 1000, SIM_PACKET, SIM_ROUNDS);
	CU_ASSERT(fabs(r.energy_j - 1000 * 8 * 3 * 1e-12) < 1e-20);
	CU_ASSERT_EQUAL(r.link_bytes[1], 1000);
	SimResult f = hand_run(&x, 1000, SIM_FLOW, SIM_ROUNDS);
	CU_ASSERT_EQUAL(f.energy_j, r.energy_j);
	/* flow mode counts the links' bytes too, and their time at full rate */
	CU_ASSERT_EQUAL(f.link_bytes[1], 1000);
	CU_ASSERT_EQUAL(f.link_busy[1], 8000 / 4e11);
	arena_free(&x.a);
}

/* Each term of the energy model against its closed form (docs/sim.md 4):
 * link = bits x hops x e, router = bits x (hops + 1) x e_r per message,
 * static = T x (ports x P_port + links x P_link); 0 by default. */
void
test_energy_terms(void)
{
	Hand x;
	hand_init(&x, 4, 4096);
	hand_msg(&x, 0, 0, 3, 1, 1, 0, NULL);
	hand_msg(&x, 0, 0, 1, 1, 2, 0, NULL);
	SimResult d = hand_run(&x, 1000, SIM_PACKET, SIM_ROUNDS);
	CU_ASSERT_EQUAL(d.energy_router_j, 0);
	CU_ASSERT_EQUAL(d.energy_static_j, 0);
	x.net.router_energy_per_bit = 0.25e-12;
	x.net.port_static_w = 0.5;
	x.net.nport = 10;
	x.net.link_static_w = 0.125;
	for (int mode = 0; mode < 2; mode++) {
		SimResult r = hand_run(&x, 1000, mode ? SIM_FLOW : SIM_PACKET, SIM_ROUNDS);
		double link = (1000 * 3 + 500 * 1) * 8 * 1e-12;
		double router = (1000 * 4 + 500 * 2) * 8 * 0.25e-12;
		double stat = r.time_s * (10 * 0.5 + 3 * 0.125);
		assert_named(fabs(r.energy_link_j - link) < 1e-21 &&
		             fabs(r.energy_router_j - router) < 1e-21 &&
		             fabs(r.energy_static_j - stat) < 1e-15 * stat &&
		             fabs(r.energy_j - (link + router + stat)) < 1e-15 * r.energy_j,
		             __LINE__, __FILE__, "mode %d: link %g (%g), router %g (%g), static %g (%g)",
		             mode, r.energy_link_j, link, r.energy_router_j, router, r.energy_static_j,
		             stat);
		CU_ASSERT(r.time_s > 0 && r.energy_j > d.energy_j);
	}
	arena_free(&x.a);
}

/* Router ports for static power: 5 on every router of a 4x4 mesh and of
 * SuperMeshAlter, 6 on SuperMeshBi's 8 non-corner border routers. The
 * energy line survives the .sim text. */
void
test_router_ports(void)
{
	Diag dgv = diag_new(), *dg = &dgv;
	static const char *const topo[] = {"mesh(4, 4)", "supermesh(4, 4, alter)",
	                                   "supermesh(4, 4, bi)"};
	static const int64_t want[] = {80, 80, 88};
	for (int i = 0; i < 3; i++) {
		char text[512];
		snprintf(text, sizeof text,
		         NET400 "port_static_power = 1 W; }\ntopology T = %s;\n"
		         "collective allreduce AR on T { algorithm ring; }\n", topo[i]);
		Built b;
		CU_ASSERT_EQUAL_FATAL(build_text(dg, &b, text, "AR"), 0);
		assert_named(b.net.nport == want[i], __LINE__, __FILE__, "%s: %lld ports, want %lld",
		             topo[i], (long long)b.net.nport, (long long)want[i]);
		CU_ASSERT_EQUAL(b.net.port_static_w, 1);
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);
		sim_write(&b.net, mem);
		fclose(mem);
		Arena a = {0};
		SimNet back;
		diag_source(dg, "t.sim", buf, len);
		CU_ASSERT_EQUAL_FATAL(sim_read(dg, &a, buf, len, &back), 0);
		CU_ASSERT_EQUAL(back.nport, want[i]);
		CU_ASSERT_EQUAL(back.port_static_w, 1);
		free(buf);
		arena_free(&a);
		built_free(dg, &b);
	}
}
