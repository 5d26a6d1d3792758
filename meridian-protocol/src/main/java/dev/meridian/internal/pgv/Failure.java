package dev.meridian.internal.pgv;

/**
 * Why a value breaks a rule: PGV's name of the rule ({@code string.min_len}) and the reason in
 * words. Built once when a rule is compiled, so a check that passes allocates nothing.
 */
record Failure(String rule, String reason) {}
