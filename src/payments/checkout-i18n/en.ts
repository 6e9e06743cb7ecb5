/**
 * The hosted pages' English text (the checkout; the refund link's page, its keys `refund_…`):
 * the reference every other language file translates, key for key (the type makes a missing key
 * a compile error, test/checkout-i18n.test.ts a failing test). `{name}` is filled in by the page;
 * everything filled in is escaped.
 */
export const en = {
  /** The language's own name, in the language switch. */
  language_name: 'English',
  /** The language switch's label (a navigation landmark). */
  language: 'Language',
  payment: 'Payment',
  the_merchant: 'the merchant',
  title: 'Pay {amount}',
  title_merchant: '{merchant}: pay {amount}',
  order: 'Order',
  price: 'Price: {price}',
  awaiting: 'Awaiting payment',
  time_left: 'Time left:',
  qr_address: 'QR code of the address (enter {amount} in your wallet)',
  qr_pay: 'QR code to pay {amount}',
  open_wallet: 'Open in wallet',
  amount: 'Amount',
  network: 'Network',
  address: 'Address',
  token: 'token',
  copy: 'Copy',
  copied: 'Copied',
  copy_amount: 'Copy amount',
  copy_address: 'Copy address',
  send_exactly: 'Send exactly this amount on {network}. This page updates when the payment arrives.',
  seen_one: 'Payment seen: waiting for {n} confirmation',
  seen_other: 'Payment seen: waiting for {n} confirmations',
  seen_body: 'Your payment is on the network. You can close this page; it completes on its own.',
  confirming: 'Payment received: confirming',
  confirming_body: 'This usually takes a moment. You can close this page.',
  underpaid: 'Partly paid: {due} still due',
  underpaid_body: 'Received {received} of {amount}. Send the rest to the same address.',
  paid: 'Paid',
  paid_body: 'Thank you: {amount} received.',
  return: 'Return to {merchant}',
  back: 'Back to {merchant}',
  /** The two links above when the merchant set no display name. */
  return_shop: 'Return to the shop',
  back_shop: 'Back to the shop',
  expired: 'Expired',
  expired_body: 'This payment request has expired. Do not send funds to its address; ask {merchant} for a new one.',
  failed: 'This payment could not be completed',
  failed_body: 'If you have sent funds, contact {merchant} with your order number.',
  refresh: 'Refresh the status',
  refresh_note: '(this page also refreshes every 15 seconds)',
  not_found: 'Payment not found',
  not_found_body: 'There is no payment at this address. Check the link you were given.',
  too_many: 'Too many requests',
  too_many_body: 'This page was loaded too often from your network. Wait a minute, then reload it.',
  /** The refund link's page (payouts/refund-page.ts): the header when the merchant set no display name. */
  refund: 'Refund',
  refund_title: 'Refund of {amount}',
  refund_title_merchant: '{merchant}: refund of {amount}',
  refund_for_order: 'Refund for order',
  refund_waiting: 'Waiting for your address',
  refund_intro: 'You are receiving a refund of {amount} on {network}. Enter the address that should receive it.',
  refund_address_label: 'Your {symbol} address on {network}',
  refund_address_note: 'Check it before you send: the address can be given only once, and money sent to a wrong address is lost.',
  refund_submit: 'Send my refund here',
  refund_your_address: 'Your address',
  refund_transaction: 'Transaction',
  refund_canceled: 'Refund canceled',
  /** {merchant} here and in refund_new_link: the display name, or the_merchant (as in expired_body and failed_body). */
  refund_canceled_body: 'Contact {merchant} about this refund.',
  refund_expired: 'This refund link has expired',
  refund_closed: 'This refund link no longer takes an address',
  refund_new_link: 'Ask {merchant} for a new refund link.',
  /** The address is in; the merchant is to send the refund. */
  refund_awaiting: 'Awaiting payment',
  refund_awaiting_body: 'Your address was received. This page shows when the refund is sent and when it arrives.',
  refund_sent: 'Sent: confirming',
  refund_sent_body: 'The refund is on the network and completes once it is confirmed.',
  refund_completed: 'Completed',
  refund_completed_body: '{amount} was refunded to your address.',
  /** Refusals of the address form, shown beside the field. */
  refund_error_empty: 'Enter your address',
  refund_error_address: 'Not a valid {network} address: check it, or copy it again from your wallet.',
  refund_error_used: 'This refund link was already used: an address was given',
  refund_error_expired: 'This refund link has expired: the address was not taken',
  refund_error_canceled: 'This refund was canceled: the address was not taken',
  refund_error_retry: 'The address could not be taken just now: reload the page and try again.',
  refund_not_found: 'Refund not found',
  refund_not_found_body: 'There is no refund at this address. Check the link you were given.',
} as const;

export type MessageKey = keyof typeof en;
/** A language file: every key of the English one, each a string. */
export type Messages = Readonly<Record<MessageKey, string>>;
