/** Brazilian CPF: 11 digits whose last two are check digits (mod 11). Punctuation ("123.456.789-09") is accepted. */

/** The digits of a CPF as given, or null when it is not 11 digits once punctuation is removed. */
export function cpfDigits(value: string): string | null {
  const trimmed = value.trim();
  if (!/^[\d.\-\s]+$/.test(trimmed)) return null;
  const digits = trimmed.replace(/\D/g, '');
  return digits.length === 11 ? digits : null;
}

function checkDigit(digits: string, length: number): number {
  let sum = 0;
  for (let i = 0; i < length; i++) sum += Number(digits[i]) * (length + 1 - i);
  const rest = (sum * 10) % 11;
  return rest === 10 ? 0 : rest;
}

/** True for 11 digits with valid check digits; sequences of one repeated digit pass the arithmetic but are invalid. */
export function isValidCpf(digits: string): boolean {
  if (!/^\d{11}$/.test(digits) || /^(\d)\1{10}$/.test(digits)) return false;
  return checkDigit(digits, 9) === Number(digits[9]) && checkDigit(digits, 10) === Number(digits[10]);
}
