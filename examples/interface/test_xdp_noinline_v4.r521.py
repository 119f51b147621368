def perf_balancer_ingress_v4(pkt, state):
    # Program: build/bpf/test_xdp_noinline.o (balancer_ingress_v4)
    # Metric: BPF instructions
    # Resolution: 521 (inputs in one class differ by less than this; the value is the middle of the class)
    # State: ch_rings (array), ctl_array (array), lru_cache (lru_hash), reals (array), stats (percpu_array), vip_map (hash)
    # Note: values computed by more than 400 operations (hashes) are taken as unconstrained while paths are checked; a path that needs a particular hash value may be impossible, and its example is solved with the exact values
    if pkt.eth.type == 0x0800:
        if pkt.len >= 34:
            if pkt.ip.ihl == 5:
                if pkt.ip.frag_off & 0x3fff == 0:
                    if pkt.ip.proto == 1:
                        if pkt.len >= 42:
                            if pkt.icmp.type == 3:
                                if pkt.icmp.code == 4:
                                    if pkt.len >= 62:
                                        if pkt[42] & 15 == 5:  # test_xdp_noinline.c:526: if (iph->ihl != 5)
                                            if pkt[51] == 17:  # test_xdp_noinline.c:721: if (protocol == IPPROTO_TCP) {
                                                if pkt.len >= 70:
                                                    return 415.5  # 158..673, 2220 paths
                                                else:
                                                    return 138  # path 4624
                                            elif pkt[51] == 6:  # test_xdp_noinline.c:721: if (protocol == IPPROTO_TCP) {
                                                if pkt.len >= 82:
                                                    return 425  # 165..685, 2400 paths
                                                else:
                                                    return 141  # path 2402
                                            else:
                                                return 111  # path 2403
                                        else:
                                            return 94  # path 4625
                                    else:
                                        return 90  # path 4626
                                else:
                                    return 86  # path 4627
                            else:
                                return 124  # 85..163, 2 paths
                        else:
                            return 81  # path 4628
                    elif pkt.ip.proto == 17:
                        if pkt.len >= 42:
                            return 383.5  # 126..641, 2220 paths
                        else:
                            return 104  # path 9251
                    elif pkt.ip.proto == 6:
                        if pkt.len >= 54:
                            return 393  # 133..653, 2400 paths
                        else:
                            return 107  # path 7029
                    else:
                        return 78  # path 7030
                else:
                    return 67  # path 9252
            else:
                return 58  # path 9253
        else:
            return 55  # path 9254
    else:
        return 10  # path 9255
