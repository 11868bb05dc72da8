import { z } from 'zod';
import { defineCollection } from '../../storage/collection.js';

export const UserInput = z.strictObject({
  name: z.string().trim().min(1, 'name must not be empty').max(200),
  email: z.email('email must be an email address').max(320).toLowerCase(),
  role: z.enum(['member', 'admin']).optional(),
});
export type UserInput = z.infer<typeof UserInput>;

export const User = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string(),
  role: z.enum(['member', 'admin']),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const UserQuery = z.strictObject({
  q: z.string().trim().min(1).max(200).optional().describe('Free text, looked for in name and email'),
  email: z.string().trim().toLowerCase().optional().describe('Exact email'),
  role: z.enum(['member', 'admin']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
export type UserQuery = z.infer<typeof UserQuery>;

export const UserPage = z.object({
  items: z.array(User),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next: z.string().nullable(),
});

export const UserId = z.object({ id: z.string().min(1).max(100) });

export const DeleteUserSelector = z.strictObject({
  id: z.string().min(1).max(100).optional().describe('The id of the user to delete (or send it in the body)'),
});

export const usersCollection = defineCollection<{ name: string; email: string; role: 'member' | 'admin' }>({
  name: 'users',
  fields: {
    name: { type: 'text', indexed: true },
    email: { type: 'text', unique: true },
    role: { type: 'text', indexed: true },
  },
  searchable: ['name', 'email'],
});
